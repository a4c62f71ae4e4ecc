package diskstats

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/writepath/writepath/internal/testenv"
)

// TestIostatEquivalence checks Stats against Debian's sysstat iostat on the
// same two snapshots of this machine's /proc/diskstats, taken under load.
//
// Method. Sampling the live file "at the same moments" as iostat can only
// bracket its reads, and any I/O from other processes in between breaks
// equality. Instead we feed iostat the very bytes we parse: sysstat >= 12.5
// reads devices from an alternate directory (`-f DIR`, file DIR/diskstats
// with `-p ALL`). The test
//
//  1. writes and fsyncs a file under /var/tmp in a goroutine, so the disk
//     behind it has reads/writes/flushes in flight;
//  2. copies /proc/diskstats twice, ~0.7 s apart: snapshots A and B;
//  3. starts `iostat -x -d -p ALL -f DIR 1 2` with DIR/diskstats = A, waits
//     for its first report (printed right after its first read), then
//     renames B over DIR/diskstats; iostat reads B one second later and
//     prints the interval A->B;
//  4. computes our Stats from the same A and B.
//
// iostat takes the interval from /proc/uptime in hundredths of a second,
// which we cannot see; so the test accepts the interval if one integer
// number of hundredths makes every printed column equal to ours to the
// two decimals iostat prints (within half a unit in the last place, for
// values that sit on a rounding boundary). Columns that do not depend on
// the interval (awaits, request sizes, merge percentages) must be equal
// for that interval as for any other.
func TestIostatEquivalence(t *testing.T) {
	iostat := testenv.Binary(t, "iostat (Debian package sysstat)", "iostat")
	dev := deviceOf(t, "/var/tmp")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); writeLoad(ctx, t, "/var/tmp") }()
	defer func() { cancel(); wg.Wait() }()

	time.Sleep(200 * time.Millisecond)
	a := readProc(t)
	time.Sleep(700 * time.Millisecond)
	b := readProc(t)
	printed := runIostatOn(t, iostat, a, b, dev)

	ca, cb := mustCounters(t, a, dev), mustCounters(t, b, dev)
	d := Diff(&ca, &cb)
	if d.WriteIOs == 0 {
		t.Fatalf("no writes on %s between the snapshots; the load did not reach the disk", dev)
	}
	itv, mismatch := matchInterval(d, printed)
	if itv == 0 {
		t.Fatalf("no interval makes our columns equal iostat's for %s; closest differences: %s", dev, mismatch)
	}
	t.Logf("%s: all %d columns equal iostat's at an interval of %d/100 s (w/s %s, %%util %s)", dev, len(printed), itv, printed["w/s"], printed["%util"])
}

// matchInterval returns the interval in hundredths of a second for which
// all printed columns match, or 0 and a description of the best attempt.
func matchInterval(d Delta, printed map[string]string) (int, string) {
	best, bestBad := "", math.MaxInt
	for itv := 50; itv <= 400; itv++ {
		s := d.Stats(time.Duration(itv) * 10 * time.Millisecond)
		var bad []string
		for _, c := range Columns() {
			p, ok := printed[c.Name]
			if !ok {
				return 0, "iostat printed no column " + c.Name
			}
			if !sameAtTwoDecimals(c.Value(&s), p) {
				bad = append(bad, fmt.Sprintf("%s ours %.4f iostat %s", c.Name, c.Value(&s), p))
			}
		}
		if len(bad) == 0 {
			return itv, ""
		}
		if len(bad) < bestBad {
			best, bestBad = fmt.Sprintf("at %d/100 s: %s", itv, strings.Join(bad, "; ")), len(bad)
		}
	}
	return 0, best
}

// sameAtTwoDecimals reports whether v prints as p with %.2f, allowing a
// value within 1e-9 of a rounding boundary to round either way (iostat
// divides by hundredths, we by seconds: the last bit may differ).
func sameAtTwoDecimals(v float64, p string) bool {
	if fmt.Sprintf("%.2f", v) == p {
		return true
	}
	pv, err := strconv.ParseFloat(p, 64)
	return err == nil && math.Abs(v-pv) <= 0.005+1e-9*math.Max(1, math.Abs(v))
}

// runIostatOn runs iostat on an alternate directory holding a, swaps in b
// after iostat's first read, and returns the second report's columns for dev.
func runIostatOn(t *testing.T, iostat string, a, b []byte, dev string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	stats := filepath.Join(dir, "diskstats")
	if err := os.WriteFile(stats, a, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(iostat, "-x", "-d", "-p", "ALL", "-f", dir, "1", "2")
	// kB columns need POSIXLY_CORRECT unset; C locale for '.' decimals.
	cmd.Env = append(withoutEnv(os.Environ(), "POSIXLY_CORRECT"), "LC_ALL=C", "S_COLORS=never")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", iostat, err)
	}
	reports := readReports(t, bufio.NewScanner(out), func() {
		if err := os.WriteFile(stats+".new", b, 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Rename(stats+".new", stats); err != nil {
			t.Error(err)
		}
	})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v", iostat, err)
	}
	if len(reports) != 2 || reports[1][dev] == nil {
		t.Fatalf("iostat printed %d reports, second has %s: %v; want 2 with the device", len(reports), dev, reports)
	}
	return reports[1][dev]
}

// readReports parses iostat's plain reports: a "Device" header line, one
// line per device, a blank line. afterFirst runs when the first ends.
func readReports(t *testing.T, sc *bufio.Scanner, afterFirst func()) []map[string]map[string]string {
	var reports []map[string]map[string]string
	var header []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) > 0 && f[0] == "Device":
			header = f
			reports = append(reports, map[string]map[string]string{})
		case len(f) == 0 && header != nil:
			if len(reports) == 1 {
				afterFirst()
			}
			header = nil
		case header != nil && len(f) == len(header):
			row := map[string]string{}
			for i := 1; i < len(f); i++ {
				row[header[i]] = f[i]
			}
			reports[len(reports)-1][f[0]] = row
		}
	}
	return reports
}

// writeLoad writes and fsyncs 64 KiB blocks until ctx ends.
func writeLoad(ctx context.Context, t *testing.T, dir string) {
	f, err := os.CreateTemp(dir, "writepath-iostat-*")
	if err != nil {
		t.Errorf("load: %v", err)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 64<<10)
	for i := 0; ctx.Err() == nil; i++ {
		buf[0] = byte(i)
		if _, err := f.WriteAt(buf, int64(i%256)*int64(len(buf))); err != nil {
			t.Errorf("load: %v", err)
			return
		}
		if err := f.Sync(); err != nil {
			t.Errorf("load: %v", err)
			return
		}
	}
}

func readProc(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(DefaultPath)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustCounters(t *testing.T, data []byte, dev string) Counters {
	t.Helper()
	lines, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := find(lines, dev)
	if !ok {
		t.Fatalf("%s not in /proc/diskstats", dev)
	}
	return c
}

// deviceOf resolves the disk behind dir on this machine.
func deviceOf(t *testing.T, dir string) string {
	t.Helper()
	devs, err := DefaultResolver().Paths(dir)
	if err != nil || len(devs) != 1 {
		t.Fatalf("Paths(%s) = %v, %v; want one device", dir, devs, err)
	}
	return devs[0].Name
}

// withoutEnv drops the variable name from env.
func withoutEnv(env []string, name string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}
