package fio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/writepath/writepath/internal/hosttest"
	"github.com/writepath/writepath/internal/testenv"
)

// errShape keeps what fio prints about a job's error, with what differs
// from run to run (pids, dates, random offsets, latencies) made constant:
// stdout's "fio: ..." lines and job lines, stderr whole.
func errShape(stdout, stderr []byte) (out, errs string) {
	norm := []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(` pid=\d+`), " pid=N"},
		{regexp.MustCompile(`: \w{3} \w{3} +\d+ \d+:\d+:\d+ \d{4}$`), ": DATE"},
		{regexp.MustCompile(`latency of \d+ nsec`), "latency of N nsec"},
		{regexp.MustCompile(` (read|write) \d+ (\d+)$`), " $1 OFF $2"},
	}
	keep := func(b []byte, all bool) string {
		var s strings.Builder
		for l := range strings.SplitSeq(strings.TrimRight(string(b), "\n"), "\n") {
			if !all && !strings.HasPrefix(l, "fio: ") && !strings.Contains(l, "(groupid=") {
				continue
			}
			for _, n := range norm {
				l = n.re.ReplaceAllString(l, n.with)
			}
			s.WriteString(l + "\n")
		}
		return s.String()
	}
	return keep(stdout, false), keep(stderr, true)
}

// TestJobErrorsMatchFio runs jobs that fail (or meet an error) with fio
// 3.33 and here, on a 16 MiB loop-device filesystem, and compares what
// each prints where, in shape, and the exit status: an ENOSPC that stops
// the job (fio's "io_u error" line on stderr, its "fio: pid=N, err=28/
// file:io_u.c:1876, ..." line and the job line's verror on stdout, exit
// 1), one continue_on_error covers without listing it (the same), one
// ignore_error lets pass (nothing on stderr, exit 0, the job line
// showing the first error), fill_fs's closing ENOSPC (the io_u error line,
// exit 0, err=0), and a latency over max_latency (ETIMEDOUT, fio's
// latency line on stderr), also with JSON output.
func TestJobErrorsMatchFio(t *testing.T) {
	fio := testenv.Fio(t)
	fs := hosttest.NewFS(t, hosttest.Options{SizeMiB: 16})
	base := []string{"--name=e", "--directory=" + fs.Dir}
	tests := []struct {
		name string
		args []string
		exit int
	}{
		{"enospc", []string{"--size=32m", "--rw=write", "--bs=64k"}, 1},
		{"enospc continue_on_error", []string{"--size=32m", "--rw=write", "--bs=64k", "--continue_on_error=all"}, 1},
		{"enospc ignored", []string{"--size=32m", "--rw=write", "--bs=64k", "--ignore_error=,ENOSPC"}, 0},
		{"enospc ignored libaio", []string{"--size=32m", "--rw=write", "--bs=64k", "--ignore_error=,ENOSPC", "--ioengine=libaio", "--direct=1"}, 0},
		{"fill_fs", []string{"--fill_fs=1", "--rw=write", "--bs=64k"}, 0},
		{"max_latency", []string{"--size=1m", "--rw=write", "--direct=1", "--max_latency=1us"}, 1},
		{"max_latency json", []string{"--size=1m", "--rw=write", "--direct=1", "--max_latency=1us", "--output-format=json"}, 1},
	}
	for _, tt := range tests {
		args := append(append([]string(nil), base...), tt.args...)
		file := filepath.Join(fs.Dir, "e.0.0")
		os.Remove(file)
		cmd := exec.Command(fio, args...)
		var fout, ferr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &fout, &ferr
		fexit := 0
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("%s: fio: %v", tt.name, err)
			}
			fexit = ee.ExitCode()
		}
		os.Remove(file)
		var out, errb bytes.Buffer
		err := RunCommand(context.Background(), args, &out, &errb, "test")
		exit := 0
		if n, ok := errors.AsType[JobsFailed](err); ok {
			exit = int(n)
		} else if err != nil {
			t.Errorf("%s: %v; want the failure reported as fio reports it", tt.name, err)
			continue
		}
		fo, fe := errShape(fout.Bytes(), ferr.Bytes())
		o, e := errShape(out.Bytes(), errb.Bytes())
		t.Logf("%s: fio exit %d\nstdout:\n%sstderr:\n%s", tt.name, fexit, fo, fe)
		if o != fo || e != fe || exit != fexit || fexit != tt.exit {
			t.Errorf("%s: writepath exit %d\nstdout:\n%sstderr:\n%s\nfio exit %d (want %d)\nstdout:\n%sstderr:\n%s",
				tt.name, exit, o, e, fexit, tt.exit, fo, fe)
		}
	}
	os.Remove(filepath.Join(fs.Dir, "e.0.0"))
}
