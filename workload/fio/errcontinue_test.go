package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/writepath/writepath/internal/hosttest"
	"github.com/writepath/writepath/internal/testenv"
)

func TestContinueOnErrorOptions(t *testing.T) {
	tests := []struct {
		args       []string
		mask       uint32
		r, w, v    []uint32
		wantErrMsg string
	}{
		{[]string{"--continue_on_error=none"}, 0, nil, nil, nil, ""},
		{[]string{"--continue_on_error=io"}, errTypeRead | errTypeWrite, nil, nil, nil, ""},
		{[]string{"--continue_on_error=1"}, errTypeAll, nil, nil, nil, ""},
		{[]string{"--continue_on_error=verify"}, errTypeVerify, nil, nil, nil, ""},
		// a list sets its type's bit, as fio's ignore_error_type
		{[]string{"--ignore_error=,ENOSPC:5"}, errTypeWrite, nil, []uint32{28, 5}, nil, ""},
		{[]string{"--continue_on_error=read", "--ignore_error=EIO,,84"}, errTypeRead | errTypeVerify, []uint32{5}, nil, []uint32{84}, ""},
		{[]string{"--ignore_error=-28"}, errTypeRead, []uint32{28}, nil, nil, ""},
		{[]string{"--continue_on_error=sometimes"}, 0, nil, nil, nil, "want none, read, write"},
		{[]string{"--ignore_error=EILSEQ"}, 0, nil, nil, nil, "Unknown error EILSEQ, please use number value"},
		{[]string{"--ignore_error=1,2,3,4"}, 0, nil, nil, nil, "Illegal error type"},
	}
	for _, tt := range tests {
		spec, err := ParseArgs(append([]string{"--name=a", "--size=1m"}, tt.args...))
		if tt.wantErrMsg != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErrMsg) {
				t.Errorf("%q: %v; want an error saying %q", tt.args, err, tt.wantErrMsg)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		j := spec.Jobs[0]
		if j.ContinueOnError != tt.mask || !slices.Equal(j.IgnoreErrorRead, tt.r) || !slices.Equal(j.IgnoreErrorWrite, tt.w) || !slices.Equal(j.IgnoreErrorVerify, tt.v) {
			t.Errorf("%q: mask %#x lists %v %v %v; want %#x %v %v %v", tt.args, j.ContinueOnError, j.IgnoreErrorRead,
				j.IgnoreErrorWrite, j.IgnoreErrorVerify, tt.mask, tt.r, tt.w, tt.v)
		}
	}
}

// errJob is what this compares of fio's JSON job.
type errJob struct {
	Error      int    `json:"error"`
	TotalErr   *int64 `json:"total_err"`
	FirstError *int   `json:"first_error"`
	Write      struct {
		TotalIOs int64 `json:"total_ios"`
		IOBytes  int64 `json:"io_bytes"`
	} `json:"write"`
}

func (e errJob) String() string {
	b, _ := json.Marshal(e)
	return string(b)
}

// TestContinueOnErrorMatchesFio writes 32 MiB into a 16 MiB filesystem
// on a loop device, so that writes fail with ENOSPC once it is full, with
// fio 3.33 and here, and compares error, total_err, first_error,
// total_ios and io_bytes: an ENOSPC let pass (ignore_error lists it)
// counts every failed write and the job runs to its end with exit 0; an
// ENOSPC continue_on_error covers but does not list (fio's list is EIO
// and EILSEQ) stops the job, counted once; none stops it uncounted and
// prints no total_err.
func TestContinueOnErrorMatchesFio(t *testing.T) {
	fio := testenv.Fio(t)
	fs := hosttest.NewFS(t, hosttest.Options{SizeMiB: 16})
	tests := [][]string{
		{"--continue_on_error=write", "--ignore_error=,ENOSPC"},
		{"--ignore_error=,EIO:ENOSPC"},
		{"--continue_on_error=all"},
		{"--continue_on_error=read", "--ignore_error=ENOSPC"},
		{"--continue_on_error=none"},
	}
	for _, extra := range tests {
		args := append([]string{"--name=e", "--directory=" + fs.Dir, "--size=32m", "--rw=write", "--bs=64k"}, extra...)
		run := func(who string, f func() ([]byte, bool)) (errJob, bool) {
			os.Remove(filepath.Join(fs.Dir, "e.0.0"))
			out, failed := f()
			if i := bytes.IndexByte(out, '{'); i > 0 {
				out = out[i:]
			}
			var doc struct{ Jobs []errJob }
			if err := json.Unmarshal(out, &doc); err != nil || len(doc.Jobs) != 1 {
				t.Fatalf("%q: %s JSON: %v: %.300s", extra, who, err, out)
			}
			return doc.Jobs[0], failed
		}
		theirs, fioFailed := run("fio", func() ([]byte, bool) {
			out, err := exec.Command(fio, append(args, "--output-format=json")...).Output()
			return out, err != nil
		})
		ours, failed := run("writepath", func() ([]byte, bool) { return runOursJSON(t, args...) })
		t.Logf("%q: fio %v (failed %v), writepath %v (failed %v)", extra, theirs, fioFailed, ours, failed)
		if ours.String() != theirs.String() || failed != fioFailed {
			t.Errorf("%q: writepath %v, failed %v; fio %v, failed %v", extra, ours, failed, theirs, fioFailed)
		}
	}
}

// TestFillDeviceMatchesFio: fill_device=1 without size= writes a 16 MiB
// loop-device filesystem until ENOSPC, with fio 3.33 and here, with psync
// and with libaio at depth 4 (O_DIRECT); both end without error (exit 0,
// error 0) having issued and written the same (the writes failing with
// ENOSPC count as issued) and leave a file of that size. With size= the
// job writes size= as any other.
func TestFillDeviceMatchesFio(t *testing.T) {
	fio := testenv.Fio(t)
	fs := hosttest.NewFS(t, hosttest.Options{SizeMiB: 16})
	for _, extra := range [][]string{
		{"--rw=write", "--bs=64k"},
		{"--rw=write", "--bs=64k", "--ioengine=libaio", "--iodepth=4", "--direct=1"},
		{"--rw=write", "--bs=64k", "--size=4m"},
	} {
		args := append([]string{"--name=f", "--directory=" + fs.Dir, "--fill_fs=1"}, extra...)
		file := filepath.Join(fs.Dir, "f.0.0")
		run := func(who string, f func() ([]byte, bool)) (errJob, bool, int64) {
			os.Remove(file)
			out, failed := f()
			if i := bytes.IndexByte(out, '{'); i > 0 {
				out = out[i:]
			}
			var doc struct{ Jobs []errJob }
			if err := json.Unmarshal(out, &doc); err != nil || len(doc.Jobs) != 1 {
				t.Fatalf("%q: %s JSON: %v: %.300s", extra, who, err, out)
			}
			st, err := os.Stat(file)
			if err != nil {
				t.Fatalf("%q: %s left no file: %v", extra, who, err)
			}
			return doc.Jobs[0], failed, st.Size()
		}
		theirs, fioFailed, fioSize := run("fio", func() ([]byte, bool) {
			out, err := exec.Command(fio, append(args, "--output-format=json")...).Output()
			return out, err != nil
		})
		ours, failed, size := run("writepath", func() ([]byte, bool) { return runOursJSON(t, args...) })
		t.Logf("%q: fio %v (failed %v, file %d), writepath %v (failed %v, file %d)", extra, theirs, fioFailed, fioSize, ours, failed, size)
		if ours.String() != theirs.String() || failed != fioFailed || size != fioSize {
			t.Errorf("%q: writepath %v, failed %v, file %d; fio %v, failed %v, file %d", extra, ours, failed, size, theirs, fioFailed, fioSize)
		}
	}
	os.Remove(filepath.Join(fs.Dir, "f.0.0"))
	for _, bad := range [][]string{{"--rw=randwrite"}, {"--rw=read"}, {"--rw=write", "--overwrite=1"}} {
		_, err := ParseArgs(append([]string{"--name=f", "--directory=" + fs.Dir, "--fill_device=1"}, bad...))
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "fill_device") {
			t.Errorf("fill_device %q: %v; want refused, saying why", bad, err)
		}
	}
}
