package fio

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/guard"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
	"github.com/writepath/writepath/workload"
)

// validJob is a job as the CLI builds it.
func validJob(t testing.TB) *fiov1.Job {
	spec, err := ParseArgs([]string{"--name=j", "--rw=randwrite", "--bs=4k", "--size=1m", "--ioengine=libaio", "--iodepth=4"})
	if err != nil {
		t.Fatal(err)
	}
	return spec.Jobs[0]
}

// TestRawSpecLimits (issue 13, point 8): a spec sent without the CLI is
// held to the CLI's bounds and more, on the worker, by New; the buffers it
// would hold (bs x iodepth x numjobs) are checked against the worker's
// budget by Check; a job file cannot have more sections than fio's jobs.
func TestRawSpecLimits(t *testing.T) {
	many := &fiov1.Spec{}
	one := validJob(t)
	for i := range 3 * MaxJobs { // the 200,000 would only take longer to build
		j := proto.CloneOf(one)
		j.Name = fmt.Sprint("j", i)
		many.Jobs = append(many.Jobs, j)
	}
	refusals := map[string]*fiov1.Spec{"3 x MaxJobs jobs": many}
	for name, mutate := range map[string]func(*fiov1.Job){
		"numjobs 2^32-1":   func(j *fiov1.Job) { j.Numjobs = 1<<32 - 1 },
		"5000 clones":      func(j *fiov1.Job) { j.Numjobs = 5000 },
		"iodepth 2^20":     func(j *fiov1.Job) { j.Iodepth = 1 << 20 },
		"bs 2^40":          func(j *fiov1.Job) { j.Bs = 1 << 40 },
		"undefined rw":     func(j *fiov1.Job) { j.Rw = 99 },
		"NUL in filename":  func(j *fiov1.Job) { j.Filename = "a\x00b" },
		"offset overflow":  func(j *fiov1.Job) { j.Offset = 1<<64 - 10 },
		"negative runtime": func(j *fiov1.Job) { j.RuntimeNs = -1 },
		"nrfiles 2^20":     func(j *fiov1.Job) { j.Nrfiles = 1 << 20 },
		"huge name":        func(j *fiov1.Job) { j.Name = strings.Repeat("x", 1<<20) },
	} {
		j := validJob(t)
		mutate(j)
		refusals[name] = &fiov1.Spec{Jobs: []*fiov1.Job{j}}
	}
	for name, spec := range refusals {
		b, _ := proto.Marshal(spec)
		if _, err := New(b); err == nil {
			t.Errorf("%s: New accepted the spec", name)
		} else if len(err.Error()) > 64<<10 {
			t.Errorf("%s: the error is %d bytes long", name, len(err.Error()))
		}
	}
	// The worker's memory budget: 4 clones x iodepth 64 x 1 MiB = 256 MiB.
	j := validJob(t)
	j.Bs, j.Iodepth, j.Numjobs = 1<<20, 64, 4
	w, err := NewFromSpec(&fiov1.Spec{Jobs: []*fiov1.Job{j}})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	for _, tt := range []struct {
		budget int64
		ok     bool
	}{{64 << 20, false}, {1 << 30, true}} {
		g, _ := guard.New(guard.Config{DataDir: data, MaxJobMemory: tt.budget})
		err := w.Check(workload.Env{DataDir: data, Guard: g})
		if tt.ok != (err == nil) || !tt.ok && !errors.Is(err, guard.ErrMemory) {
			t.Errorf("budget %d MiB: Check = %v; want ok %v", tt.budget>>20, err, tt.ok)
		}
	}
	var file strings.Builder
	for i := range MaxJobs + 1 {
		fmt.Fprintf(&file, "[j%d]\nrw=write\nsize=1m\n", i)
	}
	if _, err := parseJobFile("many.fio", file.String()); err == nil || !strings.Contains(err.Error(), "job sections") {
		t.Errorf("a job file of %d sections: %v; want refused", MaxJobs+1, err)
	}
}

// FuzzSpecValidation feeds arbitrary bytes to the worker's decoder: New
// never panics, and what it accepts keeps every bound (so planning it
// cannot allocate or spawn without limit).
func FuzzSpecValidation(f *testing.F) {
	spec := &fiov1.Spec{Jobs: []*fiov1.Job{validJob(f)}}
	b, _ := proto.Marshal(spec)
	f.Add(b)
	j := validJob(f)
	j.Numjobs, j.Iodepth = 1<<20, 1<<20
	b, _ = proto.Marshal(&fiov1.Spec{Jobs: []*fiov1.Job{j}})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		wl, err := New(b)
		if err != nil {
			return
		}
		s := wl.(*Workload).Spec()
		clones := 0
		for _, j := range s.GetJobs() {
			clones += int(j.GetNumjobs())
			if j.GetIodepth() > maxDepth || j.GetBs() > maxBS || j.GetNumjobs() < 1 || j.GetNumjobs() > maxNumjobs {
				t.Fatalf("accepted job %+v over a bound", j)
			}
		}
		if len(s.GetJobs()) > MaxJobs || clones > MaxJobs {
			t.Fatalf("accepted %d jobs, %d clones", len(s.GetJobs()), clones)
		}
		if m := bufferMemory(s); m < 0 || m > 1<<62 {
			t.Fatalf("bufferMemory = %d", m)
		}
	})
}
