package worker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/internal/fabrictest/testkind"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
	"github.com/writepath/writepath/telemetry/diskstats"
	"github.com/writepath/writepath/workload"
)

func TestHelloAdvertisesEveryLinkedKind(t *testing.T) {
	w, err := New(Config{Coordinator: "x:1", Name: "w1", Labels: map[string]string{"disk": "nvme"}})
	if err != nil {
		t.Fatal(err)
	}
	h := w.hello()
	var synth *writepathv1.KindInfo
	for _, k := range h.GetKinds() {
		if k.GetName() == "synth" {
			synth = k
		}
	}
	if synth == nil || synth.GetKind() != testkind.Kind || len(synth.GetPhases()) != 2 {
		t.Fatalf("hello kinds = %v; want synth with its 2 phases", h.GetKinds())
	}
	setup, load := synth.GetPhases()[0], synth.GetPhases()[1]
	if setup.GetPlacement() != writepathv1.Placement_PLACEMENT_ONE || setup.GetMeasured() ||
		load.GetPlacement() != writepathv1.Placement_PLACEMENT_ALL || !load.GetMeasured() {
		t.Errorf("phases = %v; want setup one/unmeasured, load all/measured", synth.GetPhases())
	}
	if h.GetName() != "w1" || h.GetLabels()["disk"] != "nvme" {
		t.Errorf("hello = %v", h)
	}
}

func TestBuildRefusesUnknownAndInvalid(t *testing.T) {
	if _, err := build(&anypb.Any{TypeUrl: "type.googleapis.com/nope.Spec"}, workload.Env{}); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind: error = %v; want ErrUnknownKind", err)
	}
	bad := &anypb.Any{TypeUrl: testkind.Kind, Value: testkind.Spec{Ops: -1, Duration: time.Second}.Marshal()}
	if _, err := build(bad, workload.Env{}); err == nil || !strings.Contains(err.Error(), "synth spec") {
		t.Errorf("invalid spec: error = %v; want the kind's message", err)
	}
	good := &anypb.Any{TypeUrl: testkind.Kind, Value: testkind.Spec{Ops: 1, Duration: time.Second}.Marshal()}
	if _, err := build(good, workload.Env{}); err != nil {
		t.Errorf("good spec: %v", err)
	}
}

func TestNewNeedsCoordinator(t *testing.T) {
	if _, err := New(Config{Name: "w"}); err == nil {
		t.Errorf("New without a coordinator address succeeded")
	}
}

// TestEncodeOpFollowsAssign: a worker sends the sparse wire encoding only
// to a coordinator that asked (Assign.sparse_histograms); one before it
// reads HDR's V2 only. Both decode to the same histogram.
func TestEncodeOpFollowsAssign(t *testing.T) {
	h := hist.New()
	for v := range int64(2000) {
		h.Record(1000 + v*v)
	}
	for _, sparse := range []bool{false, true} {
		b, err := encodeOp(h, sparse)
		if err != nil {
			t.Fatal(err)
		}
		if hist.IsSparseEncoding(b) != sparse {
			t.Errorf("asked sparse %v: sent sparse %v", sparse, hist.IsSparseEncoding(b))
		}
		got, err := hist.Decode(b)
		if err != nil {
			t.Fatalf("asked sparse %v: %v", sparse, err)
		}
		if got.Count() != h.Count() || got.Percentile(99) != h.Percentile(99) {
			t.Errorf("asked sparse %v: decodes to count %d p99 %d; want %d, %d", sparse, got.Count(), got.Percentile(99), h.Count(), h.Percentile(99))
		}
	}
}

func TestJitterStaysInRange(t *testing.T) {
	for range 1000 {
		if j := jitter(time.Second); j < 500*time.Millisecond || j > time.Second {
			t.Fatalf("jitter(1s) = %v; want [500ms, 1s]", j)
		}
	}
}

func TestTelemetryRidesOnIntervals(t *testing.T) {
	// 1000 writes of 8 sectors and 500 ms busy over 1 s: w/s 1000, wkB/s
	// 4000, wareq-sz 4, %util 50.
	d := diskstats.Delta{WriteIOs: 1000, WriteSectors: 8000, WriteTicks: 2000, IOTicks: 500, Fields: 17}
	tel := TelemetryFunc(func(time.Time) ([]DeviceStats, map[string]float64) {
		return []DeviceStats{{Device: "nvme0n1", Window: time.Second, Delta: d}}, map[string]float64{"mysql.threads_running": 4}
	})
	got := telemetryProto(tel, time.Now())
	dev := got.GetDevices()[0]
	if dev.GetWritesPerSec() != 1000 || dev.GetWriteKibPerSec() != 4000 || dev.GetWriteReqKib() != 4 ||
		dev.GetWriteAwaitMs() != 2 || dev.GetUtilPercent() != 50 || dev.GetIntervalNs() != 1e9 ||
		dev.GetDelta().GetWriteSectors() != 8000 || got.GetValues()["mysql.threads_running"] != 4 {
		t.Errorf("telemetryProto = %v", got)
	}
	if telemetryProto(nil, time.Now()) != nil {
		t.Errorf("no source: want no telemetry")
	}
}
