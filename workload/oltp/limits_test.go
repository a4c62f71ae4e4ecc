package oltp

import (
	"errors"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/guard"
	oltpv1 "github.com/writepath/writepath/proto/writepath/oltp/v1"
	"github.com/writepath/writepath/workload"
)

// TestRawSpecLimits (issue 13, point 8): New holds a raw spec to the
// command line's bounds; the run phase's connections must fit the
// worker's memory budget (Check).
func TestRawSpecLimits(t *testing.T) {
	u := func(v uint32) *uint32 { return &v }
	inf := math.Inf(1)
	for name, s := range map[string]*oltpv1.Spec{
		"index_updates 2e6":  {IndexUpdates: u(2_000_000)},
		"delete_inserts 2e6": {DeleteInserts: u(2_000_000)},
		"threads 20000":      {Threads: u(20000)},
		"tables 200000":      {Tables: u(200000)},
		"rate +Inf":          {Rate: inf},
		"percentile NaN":     {Percentile: proto.Float64(math.NaN())},
		"rand_type 99":       {RandType: 99},
		"NUL in db":          {Connection: &oltpv1.Connection{Db: proto.String("a\x00")}},
	} {
		b, _ := proto.Marshal(s)
		if _, err := New(b); err == nil {
			t.Errorf("%s: New accepted the spec", name)
		}
	}
	w, err := NewFromSpec(&oltpv1.Spec{Threads: u(10000), IndexUpdates: u(1_000_000)})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	g, _ := guard.New(guard.Config{DataDir: data})
	if err := w.Check(workload.Env{DataDir: data, Guard: g}); !errors.Is(err, guard.ErrMemory) {
		t.Errorf("10,000 threads x 1,000,000 updates per transaction: Check = %v; want over the memory budget", err)
	}
	small, _ := NewFromSpec(&oltpv1.Spec{Threads: u(64)})
	if err := small.Check(workload.Env{DataDir: data, Guard: g}); err != nil {
		t.Errorf("64 threads: Check = %v", err)
	}
}

// FuzzSpecValidation: whatever bytes reach a worker, New does not panic,
// and what it accepts keeps the bounds.
func FuzzSpecValidation(f *testing.F) {
	spec, err := ParseArgs([]string{"--tables=8", "--threads=16", "--mysql-host=127.0.0.1"})
	if err != nil {
		f.Fatal(err)
	}
	b, _ := proto.Marshal(spec)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		wl, err := New(b)
		if err != nil {
			return
		}
		o := wl.(*Workload).Options
		if o.Threads < 1 || o.Threads > 10000 || o.Tables > 100000 || o.IndexUpdates > maxStatements ||
			o.NonIndexUpdates > maxStatements || o.DeleteInserts > maxStatements || Memory(o) < 0 {
			t.Fatalf("accepted %+v over a bound", o)
		}
	})
}
