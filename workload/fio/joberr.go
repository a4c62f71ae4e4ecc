package fio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// fioError is an error that ends a job as fio 3.33 reports it: its errno
// and fio's td->verror, "file:io_u.c:1876, func=io_u error, error=No
// space left on device", where file:line is the place in fio's source
// that sets it (kept as fio's, so output matched against fio's has the
// same shape). err is writepath's own account, with the job and file.
type fioError struct {
	errno unix.Errno
	where string // fio's __FILE__:__LINE__
	fn    string // fio's func=
	err   error
}

func (e *fioError) Error() string { return e.err.Error() }
func (e *fioError) Unwrap() error { return e.err }

// verror is fio's td->verror for e.
func (e *fioError) verror() string {
	return fmt.Sprintf("file:%s, func=%s, error=%s", e.where, e.fn, strerror(int(e.errno)))
}

// Where fio 3.33 sets td->verror for the errors reported here.
const (
	whereIOU    = "io_u.c:1876" // __io_u_log_error: "io_u error"
	whereMaxLat = "io_u.c:1432" // lat_fatal: "max latency exceeded"
)

// verrorOf is fio's verror for a job's error, "" when the error is not
// one fio reports with one (writepath's own, a worker's).
func verrorOf(err error) string {
	var fe *fioError
	if errors.As(err, &fe) {
		return fe.verror()
	}
	return ""
}

// ErrJobsFailed is what RunCommand returns (wrapped in a JobsFailed) when
// jobs failed and the output already said so as fio says it.
var ErrJobsFailed = errors.New("fio jobs failed")

// JobsFailed is fio's exit status after jobs failed: the number of jobs
// (clones) that ended with an error, each reported as fio reports it, so
// the caller exits with it and prints nothing more.
type JobsFailed int

func (n JobsFailed) Error() string { return fmt.Sprintf("%d fio jobs failed", int(n)) }
func (n JobsFailed) Unwrap() error { return ErrJobsFailed }

// fioLog is where the fio front end prints what fio logs as jobs run:
// log_err lines (an io_u error, a latency over max_latency) on stderr as
// they happen, log_info's "fio: pid=N, err=E/verror" on the report's
// output as a job ends. Clones write from their own goroutines, hence
// the lock. A nil *fioLog prints nothing (the fabric's workers report
// errors in their result instead).
type fioLog struct {
	mu        sync.Mutex
	info, err io.Writer
}

// errorf is fio's log_err.
func (l *fioLog) errorf(format string, args ...any) {
	if l == nil || l.err == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.err, format, args...)
}

// jobEnded is backend.c's line for a thread that ends with td->error.
func (l *fioLog) jobEnded(err error) {
	v := verrorOf(err)
	if l == nil || l.info == nil || v == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.info, "fio: pid=%d, err=%d/%s\n", os.Getpid(), errnoOf(err), v)
}

// SetFioLog makes the run print, as fio does while its jobs run, the
// errors fio logs on stderr to errw and its job-ended lines to info (the
// report's output). Without it nothing is printed until the report.
func (w *Workload) SetFioLog(info, errw io.Writer) {
	w.log = &fioLog{info: info, err: errw}
}

// failedJobs counts the clones the last run ended with an error, and
// whether each was one fio reports as it happens (a fioError).
func (w *Workload) failedJobs() (n int, allReported bool) {
	w.mu.Lock()
	res := w.mu.res
	w.mu.Unlock()
	if res == nil {
		return 0, false
	}
	allReported = true
	for _, c := range res.clones {
		if c.err != nil {
			n++
			allReported = allReported && verrorOf(c.err) != ""
		}
	}
	return n, allReported
}
