package fio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// logStats reads a fio log: the number of columns of its lines and the
// count of lines per block size (column 4).
func logStats(t *testing.T, path string) (cols int, perBS map[string]int, lines int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	perBS = map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(l, ", ")
		cols = len(f)
		perBS[f[3]]++
		lines++
	}
	return cols, perBS, lines
}

// TestLogsAndBssplitMatchFio runs one null-engine job with bssplit and a
// latency log (with log_offset) on the real fio 3.33 and here: the same
// files, the same columns, one line per I/O, and the block sizes in the
// split's shares.
func TestLogsAndBssplitMatchFio(t *testing.T) {
	fio := fioPath(t)
	args := []string{"--name=s", "--ioengine=null", "--size=64m", "--rw=randwrite", "--bssplit=4k/25:16k/75",
		"--write_lat_log=s", "--write_bw_log=s", "--write_iops_log=s", "--log_offset=1", "--output-format=json"}
	fioDir, ourDir := t.TempDir(), t.TempDir()
	cmd := exec.Command(fio, args...)
	cmd.Dir = fioDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fio: %v\n%s", err, out)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(ourDir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errOut bytes.Buffer
	if err := RunCommand(context.Background(), args, &out, &errOut, "t"); err != nil || errOut.Len() > 0 {
		t.Fatalf("RunCommand = %v, stderr %q", err, errOut.String())
	}
	for _, name := range []string{"s_lat.1.log", "s_clat.1.log", "s_slat.1.log", "s_bw.1.log", "s_iops.1.log"} {
		if _, err := os.Stat(filepath.Join(fioDir, name)); err != nil {
			t.Fatalf("fio wrote no %s: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(ourDir, name)); err != nil {
			t.Errorf("no %s here (fio writes it): %v", name, err)
		}
	}
	fc, fbs, fn := logStats(t, filepath.Join(fioDir, "s_clat.1.log"))
	oc, obs, on := logStats(t, filepath.Join(ourDir, "s_clat.1.log"))
	if fc != oc {
		t.Errorf("clat log lines have %d columns; fio's %d", oc, fc)
	}
	for _, bs := range []string{"4096", "16384"} {
		fs, os := float64(fbs[bs])/float64(fn), float64(obs[bs])/float64(on)
		if d := fs - os; d > 0.05 || d < -0.05 {
			t.Errorf("share of %s-byte I/Os: %.3f here, %.3f in fio", bs, os, fs)
		}
	}
	covered := 0
	for bs, n := range obs {
		v, _ := strconv.Atoi(bs)
		covered += v * n // I/Os the random map shortened log their own length
	}
	if covered != 64<<20 {
		t.Errorf("logged I/Os cover %d bytes; want the 64 MiB region once", covered)
	}
}

// TestVerifyCatchesWrongBlocks: blocks written as 1 MiB and read back as
// 512 bytes fail verification with EILSEQ (fio's t0003 case), and the
// same layout read back as written passes.
func TestVerifyCatchesWrongBlocks(t *testing.T) {
	dir := diskDir(t)
	f := filepath.Join(dir, "v")
	base := []string{"--filename=" + f, "--direct=1", "--ioengine=libaio", "--iodepth=8", "--verify=md5", "--size=4m"}
	if _, _, err := runArgs(t, dir, append([]string{"--name=w", "--rw=write", "--bs=1m"}, base...)...); err != nil {
		t.Fatalf("write with do_verify: %v", err)
	}
	if _, _, err := runArgs(t, dir, append([]string{"--name=r", "--rw=read", "--bs=1m"}, base...)...); err != nil {
		t.Errorf("read back as written: %v", err)
	}
	_, _, err := runArgs(t, dir, append([]string{"--name=r", "--rw=read", "--bs=512", "--verify_fatal=1"}, base...)...)
	if !errors.Is(err, unix.EILSEQ) || !strings.Contains(err.Error(), "written 1048576 bytes long, read as 512") {
		t.Errorf("read as 512-byte blocks: %v; want EILSEQ naming the lengths", err)
	}
}

// TestVerifyBacklogMatchesFio: verify_backlog=N reads each block back
// once, N at a time between the writes, and do_verify's final pass reads
// nothing again: the same reads, writes and error as the real fio 3.33
// (fio's t0005, smaller), for a sync and a queueing engine.
func TestVerifyBacklogMatchesFio(t *testing.T) {
	fio := fioPath(t)
	dir := diskDir(t)
	for _, engine := range []string{"sync", "libaio"} {
		theirs, ours, _, _ := runBoth(t, fio, "--name=v", "--ioengine="+engine, "--iodepth=8", "--bs=4k", "--size=4m",
			"--rw=randwrite", "--verify=md5", "--verify_backlog=32", "--filename="+filepath.Join(dir, "v."+engine))
		if theirs != ours || ours.Read.IOs != 1024 {
			t.Errorf("%s: counts %+v; fio's %+v (1024 reads)", engine, ours, theirs)
		}
	}
}

// TestHistLogWindowsPerDirection: the histogram log keeps one window per
// direction from its first sample, as fio 3.33's stat.c does: a
// direction with no I/O has no rows, and the last, partial window is
// left out (fio-histo-log-pctiles showed writepath's as a row of none).
func TestHistLogWindowsPerDirection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	h := &clatHist{f: f, every: 500}
	for ms := uint64(0); ms <= 1200; ms += 100 {
		h.record(ms, 1000, 1, 4096) // writes only, 1 us each
	}
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	want := []struct {
		prefix string
		n      uint64
	}{{"500, 1, 4096, ", 6}, {"1000, 1, 4096, ", 5}}
	if len(lines) != len(want) {
		t.Fatalf("%d rows; want %d:\n%s", len(lines), len(want), b)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w.prefix) {
			t.Errorf("row %d = %.40q; want it to start %q", i, lines[i], w.prefix)
			continue
		}
		var sum uint64
		fields := strings.Split(strings.TrimPrefix(lines[i], w.prefix), ", ")
		for _, c := range fields {
			n, err := strconv.ParseUint(c, 10, 64)
			if err != nil {
				t.Fatalf("row %d: %q: %v", i, c, err)
			}
			sum += n
		}
		if len(fields) != platNR || sum != w.n {
			t.Errorf("row %d: %d bins holding %d samples; want %d holding %d", i, len(fields), sum, platNR, w.n)
		}
	}
}
