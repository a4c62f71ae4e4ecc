package fio

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompressedLogsMatchFio: the same null-engine job with
// log_store_compressed=1 leaves a .fz log here and under the real fio
// 3.33 that both fio --inflate-log and writepath's read back line for
// line alike, with the lines fio logged (the time column aside), and
// log_compression= alone leaves the plain log it would without.
func TestCompressedLogsMatchFio(t *testing.T) {
	fio := fioPath(t)
	for _, extra := range [][]string{
		{"--log_offset=1", "--log_compression=4k"},
		{"--log_prio=1"},
	} {
		args := append([]string{"--name=z", "--ioengine=null", "--size=2m", "--bs=4k", "--rw=randwrite", "--norandommap",
			"--write_iops_log=z", "--per_job_logs=0", "--log_store_compressed=1"}, extra...)
		_, _, fioDir, ourDir := runBoth(t, fio, args...)
		var inflated [2][2]string // [whose file][whose inflater]
		for i, dir := range []string{fioDir, ourDir} {
			fz := filepath.Join(dir, "z_iops.log.fz")
			out, err := exec.Command(fio, "--inflate-log="+fz).Output()
			if err != nil {
				t.Fatalf("%v: fio --inflate-log=%s: %v", extra, fz, err)
			}
			var ours bytes.Buffer
			if err := InflateLog(fz, &ours); err != nil {
				t.Fatalf("%v: InflateLog(%s): %v", extra, fz, err)
			}
			inflated[i] = [2]string{string(out), ours.String()}
			if string(out) != ours.String() {
				t.Errorf("%v: %s inflated by fio and here differ:\n%.200s\n%.200s", extra, fz, out, ours.String())
			}
		}
		theirs, ours := untimed(inflated[0][0]), untimed(inflated[1][0])
		if len(theirs) != 512 || len(ours) != len(theirs) {
			t.Fatalf("%v: %d samples here, %d from fio; want 512", extra, len(ours), len(theirs))
		}
		// randwrite offsets are each side's own draw: compare the other
		// columns, and the offsets' presence
		for i := range ours {
			if ours[i].rest != theirs[i].rest || ours[i].cols != theirs[i].cols {
				t.Errorf("%v: sample %d is %q (%d columns); fio's %q (%d)", extra, i, ours[i].rest, ours[i].cols, theirs[i].rest, theirs[i].cols)
				break
			}
		}
	}
	// log_compression alone: the plain log, as without it
	_, _, fioDir, ourDir := runBoth(t, fio, "--name=z", "--ioengine=null", "--size=1m", "--bs=4k", "--rw=write",
		"--write_iops_log=z", "--per_job_logs=0", "--log_offset=1", "--log_compression=4k")
	for _, dir := range []string{fioDir, ourDir} {
		b, err := os.ReadFile(filepath.Join(dir, "z_iops.log"))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n != 256 {
			t.Errorf("%s: %d lines with log_compression alone; want 256", dir, n)
		}
	}
}

type sampleLine struct {
	rest string // value, ddir, bs and priority
	cols int
}

// untimed splits inflated log lines into the columns both sides share.
func untimed(s string) []sampleLine {
	var out []sampleLine
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Split(l, ", ")
		if len(f) < 5 {
			continue
		}
		out = append(out, sampleLine{rest: f[1] + "," + f[2] + "," + f[3] + "," + f[len(f)-1], cols: len(f)})
	}
	return out
}

// TestInflateLogRefusesGarbage: a file that is not zlib streams is one
// error naming it, not a panic or silent empty output.
func TestInflateLogRefusesGarbage(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.fz")
	if err := os.WriteFile(p, []byte("not a log"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := InflateLog(p, &out); err == nil || !strings.Contains(err.Error(), "x.fz") {
		t.Errorf("InflateLog(garbage) = %v; want an error naming the file", err)
	}
}
