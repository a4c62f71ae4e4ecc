package runview_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/local"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/report"
	"github.com/writepath/writepath/results"
	"github.com/writepath/writepath/runview"
	"github.com/writepath/writepath/telemetry/diskstats"
	"github.com/writepath/writepath/worker"
	"github.com/writepath/writepath/workload"
	_ "github.com/writepath/writepath/workload/fio"
)

// TestFioTelemetryEndToEnd runs a real fio job (libaio, direct=1, random
// 4 KiB writes in a temporary directory) on an embedded fabric whose worker
// samples the disk behind that directory, and follows the telemetry from
// /proc/diskstats through the worker, the coordinator's merge and the
// store to the live lines (--show iostat), the summary (`runs show`) and
// the report.
func TestFioTelemetryEndToEnd(t *testing.T) {
	dir := t.TempDir()
	devs, err := diskstats.DefaultResolver().Paths(dir)
	if err != nil {
		t.Fatalf("resolve %s: %v", dir, err)
	}
	tel, err := worker.NewDiskTelemetry(diskstats.DefaultPath, diskstats.DeviceNames(devs, true))
	if err != nil {
		t.Fatal(err)
	}
	f, err := local.Start(local.Config{Workers: 1, DBPath: filepath.Join(t.TempDir(), "w.db"), CheckOnClose: true,
		Worker: worker.Config{DataDir: dir, Telemetry: tel}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := f.WaitWorkers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	spec := fioSpec(t, "--name=t", "--rw=randwrite", "--bs=4k", "--size=32M", "--runtime=2", "--time_based",
		"--direct=1", "--ioengine=libaio", "--iodepth=16")
	var lines bytes.Buffer
	p := &client.Printer{W: &lines, Show: client.Show{Lines: true, IOStat: true}}
	c := client.New(f.Control())
	run, err := c.Run(ctx, spec, p.Event)
	if err != nil || run.GetState() != writepathv1.RunState_RUN_STATE_FINISHED {
		t.Fatalf("Run = %v (%s), %v; want FINISHED", run.GetState(), run.GetReason(), err)
	}
	dev := devs[0].Name
	t.Logf("live lines:\n%s", lines.String())
	if !strings.Contains(lines.String(), "| "+dev+" w/s ") || !strings.Contains(lines.String(), "%util") {
		t.Errorf("live lines lack %s's iostat columns:\n%s", dev, lines.String())
	}
	detail, err := results.Read(ctx, c, run.GetId(), results.PerWorker)
	if err != nil {
		t.Fatal(err)
	}
	checkStoredWrites(t, detail, dev)
	checkSummary(t, detail, dev)
	checkReport(t, detail, dev)
}

func fioSpec(t *testing.T, args ...string) *writepathv1.RunSpec {
	t.Helper()
	meta, ok := workload.ByName("fio")
	if !ok {
		t.Fatal("fio kind not registered")
	}
	b, err := meta.FromArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	return &writepathv1.RunSpec{Spec: &anypb.Any{TypeUrl: meta.Kind, Value: b}, Interval: durationpb.New(500 * time.Millisecond)}
}

// checkStoredWrites: the stored merged intervals carry the worker's device
// with writes while fio wrote.
func checkStoredWrites(t *testing.T, detail *results.Run, dev string) {
	t.Helper()
	var busy int
	for _, mi := range detail.Intervals {
		for _, wt := range mi.GetTelemetry() {
			for _, d := range wt.GetTelemetry().GetDevices() {
				if d.GetDevice() == dev && d.GetWritesPerSec() > 0 && d.GetDelta().GetWriteIos() > 0 && d.GetIntervalNs() > 0 {
					busy++
				}
			}
		}
	}
	if busy < 2 {
		t.Errorf("%d stored intervals with %s w/s > 0; want >= 2 of %d", busy, dev, len(detail.Intervals))
	}
}

func checkSummary(t *testing.T, detail *results.Run, dev string) {
	t.Helper()
	s, err := client.Summarize(detail, client.Kind{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := client.WriteSummary(&out, s); err != nil {
		t.Fatal(err)
	}
	t.Logf("summary:\n%s", out.String())
	if !strings.Contains(out.String(), "devices (iostat -x") || !strings.Contains(out.String(), dev+" mean") {
		t.Errorf("summary lacks the device table:\n%s", out.String())
	}
	ph := s.Phases[len(s.Phases)-1]
	if len(ph.Devices) == 0 || ph.Devices[0].Mean["w/s"] <= 0 || ph.Devices[0].Max["w/s"] < ph.Devices[0].Mean["w/s"] {
		t.Errorf("phase %s devices = %+v; want w/s mean > 0 and max >= mean", ph.Phase, ph.Devices)
	}
}

func checkReport(t *testing.T, detail *results.Run, dev string) {
	t.Helper()
	r, err := runview.Run(detail)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, s := range r.Devices {
		if s.Name == dev+" w/s" && len(s.Values) == len(detail.Intervals) && slicesMax(s.Values) > 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("report devices lack %q with writes: %+v", dev+" w/s", r.Devices)
	}
	var html bytes.Buffer
	if err := report.WriteRunHTML(&html, r); err != nil || !strings.Contains(html.String(), dev+" w/s") {
		t.Errorf("WriteRunHTML = %v; or the page lacks the device series", err)
	}
}

func slicesMax(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
