package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// dirCounts is a JSON job's I/O count and bytes per direction and its
// error, as fio reports them.
type dirCounts struct {
	Error int `json:"error"`
	Read  struct {
		IOs   int64 `json:"total_ios"`
		Bytes int64 `json:"io_bytes"`
	} `json:"read"`
	Write struct {
		IOs   int64 `json:"total_ios"`
		Bytes int64 `json:"io_bytes"`
	} `json:"write"`
	Trim struct {
		IOs   int64 `json:"total_ios"`
		Bytes int64 `json:"io_bytes"`
	} `json:"trim"`
}

// runBoth runs args with the real fio and here, each in its own
// directory, and returns both JSON documents' first job and the
// directories.
func runBoth(t *testing.T, fio string, args ...string) (theirs, ours dirCounts, fioDir, ourDir string) {
	t.Helper()
	fioDir, ourDir = t.TempDir(), t.TempDir()
	cmd := exec.Command(fio, append(args, "--output-format=json")...)
	cmd.Dir = fioDir
	fioOut, _ := cmd.Output() // a job error is a non-zero exit; the JSON says which
	wd, _ := os.Getwd()
	if err := os.Chdir(ourDir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errOut bytes.Buffer
	_ = RunCommand(context.Background(), append(args, "--output-format=json"), &out, &errOut, "t")
	for _, x := range []struct {
		b   []byte
		dst *dirCounts
		who string
	}{{fioOut, &theirs, "fio"}, {out.Bytes(), &ours, "writepath"}} {
		var doc struct {
			Jobs []dirCounts `json:"jobs"`
		}
		if i := bytes.IndexByte(x.b, '{'); i > 0 {
			x.b = x.b[i:] // fio prints a failed job's error line first
		}
		if err := json.Unmarshal(x.b, &doc); err != nil || len(doc.Jobs) == 0 {
			t.Fatalf("%s JSON: %v\n%s", x.who, err, x.b)
		}
		*x.dst = doc.Jobs[0]
	}
	return theirs, ours, fioDir, ourDir
}

// TestTrimMatchesFio runs each trim pattern with the null engine on the
// real fio 3.33 and here: the same trims, writes and bytes, and in the
// per-I/O bandwidth log every trimwrite write follows its trim at the
// same offset and length (fio's t0023/t0024 checks). One block size for
// all directions: with a trim size unlike the write size, fio's
// sequential trimwrite writes with its own size on a stream of its own
// (and its random map leaves blocks untrimmed), where writepath writes
// what each trim trimmed.
func TestTrimMatchesFio(t *testing.T) {
	fio := fioPath(t)
	for _, rw := range []string{"trim", "randtrim", "trimwrite", "randtrimwrite"} {
		t.Run(rw, func(t *testing.T) {
			theirs, ours, _, ourDir := runBoth(t, fio, "--name=t", "--ioengine=null", "--filesize=1M", "--rw="+rw,
				"--bs=8k", "--write_bw_log=t", "--log_offset=1", "--per_job_logs=0")
			if theirs != ours {
				t.Errorf("counts %+v; fio's %+v", ours, theirs)
			}
			if !strings.Contains(rw, "write") {
				return
			}
			b, err := os.ReadFile(filepath.Join(ourDir, "t_bw.log"))
			if err != nil {
				t.Fatal(err)
			}
			var prev []string
			for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				f := strings.Split(l, ", ")
				want := "2"
				if i%2 == 1 {
					want = "1"
				}
				if f[2] != want {
					t.Fatalf("line %d %q: direction %s; want %s (trim, then its write)", i+1, l, f[2], want)
				}
				if i%2 == 1 && (f[3] != prev[3] || f[4] != prev[4]) {
					t.Fatalf("line %d %q: write of %s at %s after a trim of %s at %s", i+1, l, f[3], f[4], prev[3], prev[4])
				}
				prev = f
			}
		})
	}
}

// TestTrimOnFileFailsAsInFio: a trim on a regular file is BLKDISCARD on
// a file, refused with ENOTTY (25), and both report that error.
func TestTrimOnFileFailsAsInFio(t *testing.T) {
	fio := fioPath(t)
	dir := diskDir(t)
	theirs, ours, _, _ := runBoth(t, fio, "--name=t", "--filename="+filepath.Join(dir, "tf"), "--size=64k", "--rw=trim")
	if theirs.Error != 25 || ours.Error != theirs.Error {
		t.Errorf("error %d; fio's %d (want ENOTTY, 25)", ours.Error, theirs.Error)
	}
}

// logOffsets is a log's offset column (log_offset=1), in order.
func logOffsets(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		out = append(out, strings.Split(l, ", ")[4])
	}
	return out
}

// TestNegativeHoleReadsBackwardsAsFio: rw=read:-8k (fio's
// examples/backwards-read.fio) visits exactly fio's offsets, in fio's
// order, and so does a positive hole.
func TestNegativeHoleReadsBackwardsAsFio(t *testing.T) {
	fio := fioPath(t)
	for _, rw := range []string{"read:-8k", "write:12k"} {
		theirs, ours, fioDir, ourDir := runBoth(t, fio, "--name=b", "--ioengine=null", "--size=1m", "--rw="+rw,
			"--write_bw_log=b", "--log_offset=1", "--per_job_logs=0")
		if theirs != ours {
			t.Errorf("rw=%s: counts %+v; fio's %+v", rw, ours, theirs)
		}
		want, got := logOffsets(t, filepath.Join(fioDir, "b_bw.log")), logOffsets(t, filepath.Join(ourDir, "b_bw.log"))
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("rw=%s: offsets %v...; fio's %v...", rw, got[:min(8, len(got))], want[:min(8, len(want))])
		}
	}
}

// TestPosixaioAndPvsync2MatchFio: ioengine=posixaio (glibc's helper
// thread, in order) and pvsync2 (preadv2/pwritev2) run fio's job to the
// same reads, writes and error as the real fio 3.33 (fio's t0017).
func TestPosixaioAndPvsync2MatchFio(t *testing.T) {
	fio := fioPath(t)
	dir := diskDir(t)
	for _, engine := range []string{"posixaio", "pvsync2"} {
		for _, rw := range []string{"randwrite", "read"} {
			theirs, ours, _, _ := runBoth(t, fio, "--name=p", "--ioengine="+engine, "--iodepth=16", "--size=1m", "--rw="+rw,
				"--filename="+filepath.Join(dir, "p."+engine))
			if theirs != ours || ours.Read.IOs+ours.Write.IOs != 256 {
				t.Errorf("%s %s: counts %+v; fio's %+v", engine, rw, ours, theirs)
			}
		}
	}
}

// ioLogLines is an I/O log's lines without their times.
func ioLogLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	out := []string{lines[0]}
	for _, l := range lines[1:] {
		_, rest, _ := strings.Cut(l, " ")
		out = append(out, rest)
	}
	return out
}

// TestWriteIologMatchesFio: write_iolog= writes fio's version 3 I/O log,
// the same lines as the real fio 3.33 for a sequential job with syncs and
// a hole (fio's t0007 case: the loop ends where a block no longer fits).
func TestWriteIologMatchesFio(t *testing.T) {
	fio := fioPath(t)
	for _, args := range [][]string{
		{"--name=w", "--size=64k", "--rw=write", "--fsync=4", "--write_iolog=io.log"},
		{"--name=r", "--size=8m", "--rw=read:512k", "--bs=1m", "--write_iolog=io.log"},
	} {
		theirs, ours, fioDir, ourDir := runBoth(t, fio, args...)
		if theirs != ours {
			t.Errorf("%q: counts %+v; fio's %+v", args, ours, theirs)
		}
		want, got := ioLogLines(t, filepath.Join(fioDir, "io.log")), ioLogLines(t, filepath.Join(ourDir, "io.log"))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%q: I/O log\n%s\nfio's\n%s", args, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestOffsetIncrementMatchesFio: offset_increment= starts clone N of a
// job N increments past offset=, as fio's subjobs: the clones' logs hold
// fio's offsets (fio numbers its logs in another order than its
// subjobs, so the logs are compared as a set).
func TestOffsetIncrementMatchesFio(t *testing.T) {
	fio := fioPath(t)
	args := []string{"--name=o", "--ioengine=null", "--size=64k", "--offset=4k", "--offset_increment=1m", "--numjobs=3",
		"--rw=write", "--write_bw_log=o", "--log_offset=1"}
	_, _, fioDir, ourDir := runBoth(t, fio, args...)
	all := func(dir string) string {
		var logs []string
		for n := 1; n <= 3; n++ {
			logs = append(logs, strings.Join(logOffsets(t, filepath.Join(dir, "o_bw."+string(rune('0'+n))+".log")), " "))
		}
		sort.Strings(logs)
		return strings.Join(logs, "\n")
	}
	if got, want := all(ourDir), all(fioDir); got != want {
		t.Errorf("clones' offsets\n%.300s\nfio's\n%.300s", got, want)
	}
}

// TestThinktimeMatchesFio: thinktime=2000 (µs) every 8 I/Os makes 200
// I/Os last about 25 pauses of 2 ms, here as in the real fio 3.33 (a
// lower bound only, and a loose upper one: sleeps overrun on a busy
// machine).
func TestThinktimeMatchesFio(t *testing.T) {
	fio := fioPath(t)
	args := []string{"--name=t", "--ioengine=null", "--rw=randread", "--size=1m", "--thinktime=2000", "--thinktime_blocks=8",
		"--number_ios=200", "--output-format=json"}
	runtime := func(b []byte) int64 {
		var doc struct {
			Jobs []struct {
				Read struct {
					IOs     int64 `json:"total_ios"`
					Runtime int64 `json:"runtime"`
				} `json:"read"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || doc.Jobs[0].Read.IOs != 200 {
			t.Fatalf("JSON %v, %+v", err, doc)
		}
		return doc.Jobs[0].Read.Runtime
	}
	fioOut, err := exec.Command(fio, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := RunCommand(context.Background(), args, &out, &errOut, "t"); err != nil {
		t.Fatal(err)
	}
	theirs, ours := runtime(fioOut), runtime(out.Bytes())
	if theirs < 48 || ours < 48 || ours > 3*theirs+100 {
		t.Errorf("runtime %d ms; fio's %d ms (want at least 24 pauses of 2 ms each)", ours, theirs)
	}
}

// TestExitallMatchesFio: with exitall=1 on a short job, the long
// time-based job of its group stops when the short one is done, as in
// the real fio 3.33 (both well before the long job's 10 s).
func TestExitallMatchesFio(t *testing.T) {
	fio := fioPath(t)
	args := []string{"--ioengine=null", "--size=1g", "--name=short", "--number_ios=500", "--thinktime=1000", "--exitall",
		"--name=long", "--time_based", "--runtime=10", "--output-format=json"}
	fioOut, err := exec.Command(fio, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := RunCommand(context.Background(), args, &out, &errOut, "t"); err != nil {
		t.Fatal(err)
	}
	for who, b := range map[string][]byte{"fio": fioOut, "writepath": out.Bytes()} {
		if i := bytes.IndexByte(b, '{'); i > 0 {
			b = b[i:] // fio prints its job lines first with exitall
		}
		var doc struct {
			Jobs []struct {
				Runtime int64 `json:"job_runtime"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || len(doc.Jobs) != 2 {
			t.Fatalf("%s: %v", who, err)
		}
		short, long := doc.Jobs[0].Runtime, doc.Jobs[1].Runtime
		if long > short+1000 || long >= 9000 {
			t.Errorf("%s: the long job ran %d ms after the short one's %d ms; want it stopped with it", who, long, short)
		}
	}
}
