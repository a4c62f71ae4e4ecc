package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/runview"
	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// TestBlockD2CMatchesBpftrace runs a 4 KiB random-write direct-IO fio job
// through `writepath run fio --show block` on a loop device of its own
// while bpftrace measures the same device's issue -> complete time the way
// people do by hand (tracepoints keyed by device and sector, log2 hist()).
// bpftrace is attached before the run starts and stopped after it ends,
// and only the job writes to the device, so both see the same requests:
// the counts must agree within 1% and p50/p90/p99/p99.9 of writepath's
// merged, stored histogram must fall in bpftrace's bucket for them.
func TestBlockD2CMatchesBpftrace(t *testing.T) {
	needTracing(t)
	dev := loopDevice(t, 256<<20, 0)
	script := fmt.Sprintf(`BEGIN { printf("ready\n"); }
tracepoint:block:block_rq_issue /args->dev == %[1]d/ { @s[args->sector] = nsecs; }
tracepoint:block:block_rq_complete /args->dev == %[1]d && @s[args->sector]/ {
	@d2c = hist(nsecs - @s[args->sector]); @n = count(); delete(@s[args->sector]); }
END { clear(@s); }`, devNumber(t, dev))
	bt := startBpftrace(t, script)

	dir := t.TempDir()
	db := dir + "/writepath.db"
	var out, errOut bytes.Buffer
	ctx := testContext(t, 90*time.Second)
	err := runKind(ctx, []string{"fio", "--show", "lines,block", "--data-dir", dir, "--db", db, "--devices", dev,
		"--name=d2c", "--filename=/dev/" + dev, "--rw=randwrite", "--bs=4k", "--size=128M", "--runtime=3", "--time_based",
		"--direct=1", "--ioengine=libaio", "--iodepth=16"}, &out, &errOut)
	btOut := bt.stop(t)
	if err != nil {
		t.Fatalf("run fio: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	if !regexp.MustCompile(`\| ` + dev + ` write \d+ d2c p50 `).MatchString(out.String()) {
		t.Errorf("no live line with the device's D2C:\n%s", out.String())
	}
	m := regexp.MustCompile(`run (\S+): finished`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no finished run in:\n%s\n%s", out.String(), errOut.String())
	}
	src, err := client.OpenFile(db)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	detail, err := results.Read(ctx, src, m[1], results.PerWorker)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := client.Cumulative(detail, "", "", series.Block(dev, "write", series.D2C))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := parseHist(btOut, "d2c")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, b := range theirs {
		n += b.Count
	}
	t.Logf("%s writes: writepath %d, bpftrace %d", dev, ours.Count(), n)
	if diff := ours.Count() - n; n == 0 || diff*100 > n || -diff*100 > n {
		t.Errorf("D2C count: writepath %d, bpftrace %d; want within 1%%\n%s", ours.Count(), n, btOut)
	}
	var report strings.Builder
	for _, p := range []float64{50, 90, 99, 99.9} {
		b, v := bucketAt(theirs, p), ours.Percentile(p)
		fmt.Fprintf(&report, "p%v writepath %d ns, bpftrace [%d, %d); ", p, v, b.Lo, b.Hi)
		if v < b.Lo || v >= b.Hi {
			t.Errorf("D2C p%v: writepath %d ns outside bpftrace's bucket [%d, %d)", p, v, b.Lo, b.Hi)
		}
	}
	t.Log(report.String())
	// The report draws the series apart from the workload's ops.
	rv, err := runview.Run(detail)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rv.Ops {
		if series.Is(o.Name) {
			t.Errorf("report op %s is a kernel series", o.Name)
		}
	}
	found := false
	for _, e := range rv.Evidence {
		found = found || e.Name == series.Block(dev, "write", series.D2C) && e.Count == ours.Count()
	}
	if !found || len(rv.Block) == 0 {
		t.Errorf("report evidence %+v, block panel %d series; want %s with %d values", rv.Evidence, len(rv.Block), series.Block(dev, "write", series.D2C), ours.Count())
	}
}
