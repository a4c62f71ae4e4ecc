package fio

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/workload"
)

// TestReportAgreesWithIntervals: fio's JSON of a run (the summary a worker
// sends its client) and the fabric's view of the same run (every interval
// the worker sends, merged) hold the same I/Os: counts and bytes per
// direction and of syncs, clat percentiles as fio ranks them, the very
// histogram; lat and slat count the same I/Os; ramp_time's I/Os are in
// neither. Both are the Recorder's.
func TestReportAgreesWithIntervals(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		ramp time.Duration
		slat bool // a queued engine
	}{
		{"libaio clones in one group, ramp_time, fsync", []string{"--name=a", "--rw=randwrite", "--ioengine=libaio", "--iodepth=4",
			"--direct=1", "--size=2m", "--numjobs=2", "--group_reporting", "--time_based", "--runtime=600ms", "--ramp_time=300ms", "--fsync=16"},
			300 * time.Millisecond, true},
		{"psync randrw clones apart", []string{"--name=b", "--rw=randrw", "--direct=1", "--size=1m", "--numjobs=2",
			"--time_based", "--runtime=400ms"}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := ParseArgs(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewFromSpec(spec)
			if err != nil {
				t.Fatal(err)
			}
			env := workload.Env{DataDir: diskDir(t), Start: time.Now().Add(20 * time.Millisecond)}
			fabric := map[string]*hist.Histogram{"read": hist.New(), "write": hist.New(), "sync": hist.New()}
			counters := map[string]int64{}
			var inRamp int64
			err = workload.Drive(t.Context(), w, PhaseRun, env, 50*time.Millisecond, func(s workload.Snapshot) {
				for op, h := range fabric {
					if err := h.Merge(s.Ops[op]); err != nil {
						t.Error(err)
					}
					if s.Ops[op] != nil && s.End.Before(env.Start.Add(tc.ramp)) {
						inRamp += s.Ops[op].Count()
					}
				}
				for k, v := range s.Counters {
					counters[k] += v
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			b, err := w.Summary(PhaseRun)
			if err != nil {
				t.Fatal(err)
			}
			var sum agreeJSON
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			if inRamp != 0 {
				t.Errorf("%d I/Os in the intervals ending within ramp_time=%v; want none", inRamp, tc.ramp)
			}
			var n [2]int64
			var bytes [2]int64
			var syncs int64
			for _, j := range sum.Jobs {
				syncs += j.Sync.TotalIOs
				for d, dj := range []agreeDir{j.Read, j.Write} {
					n[d] += dj.TotalIOs
					bytes[d] += dj.IOBytes
					want := int64(0)
					if tc.slat {
						want = dj.Clat.N
					}
					if dj.Clat.N != dj.TotalIOs || dj.Lat.N != dj.TotalIOs || dj.Slat.N != want {
						t.Errorf("job %s %s: %d I/Os, clat N %d, lat N %d, slat N %d (want %d)", j.Name, dirLabel[d], dj.TotalIOs, dj.Clat.N, dj.Lat.N, dj.Slat.N, want)
					}
				}
			}
			t.Logf("%d jobs: %d reads, %d writes, %d syncs; intervals %d, %d, %d", len(sum.Jobs), n[0], n[1], syncs,
				fabric["read"].Count(), fabric["write"].Count(), fabric["sync"].Count())
			for d, op := range []string{"read", "write"} {
				if n[d] != fabric[op].Count() || bytes[d] != counters[op+"_bytes"] {
					t.Errorf("%s: fio JSON %d I/Os of %d bytes; intervals %d of %d", op, n[d], bytes[d], fabric[op].Count(), counters[op+"_bytes"])
				}
			}
			if syncs != fabric["sync"].Count() || n[1] == 0 {
				t.Errorf("fio JSON %d syncs and %d writes; intervals %d syncs", syncs, n[1], fabric["sync"].Count())
			}
			if len(sum.Jobs) != 1 {
				return // rows per clone: their counts add up, checked above
			}
			j := sum.Jobs[0]
			for d, dj := range []agreeDir{j.Read, j.Write} {
				op := dirLabel[d]
				if fabric[op].Count() == 0 {
					continue
				}
				for i, v := range fioPercentiles(fabric[op], percentiles) {
					if k := fmt.Sprintf("%f", percentiles[i]); dj.Clat.Percentile[k] != v {
						t.Errorf("%s clat p%s: fio JSON %d, intervals %d", op, k, dj.Clat.Percentile[k], v)
					}
				}
				got, err := decodeHist(j.Writepath.Dirs[d].Clat)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Buckets(), fabric[op].Buckets()) {
					t.Errorf("%s: the summary's clat histogram is not the intervals' merged", op)
				}
			}
		})
	}
}

type (
	agreeJSON struct {
		Jobs []struct {
			Name      string         `json:"jobname"`
			Read      agreeDir       `json:"read"`
			Write     agreeDir       `json:"write"`
			Sync      agreeSync      `json:"sync"`
			Writepath *summaryJobExt `json:"writepath"`
		} `json:"jobs"`
	}
	agreeDir struct {
		IOBytes  int64   `json:"io_bytes"`
		TotalIOs int64   `json:"total_ios"`
		Clat     agreeNs `json:"clat_ns"`
		Lat      agreeNs `json:"lat_ns"`
		Slat     agreeNs `json:"slat_ns"`
	}
	agreeSync struct {
		TotalIOs int64 `json:"total_ios"`
	}
	agreeNs struct {
		N          int64            `json:"N"`
		Percentile map[string]int64 `json:"percentile"`
	}
)

// TestSlatForQueuedEnginesOnly: the engine loops that submit and
// complete apart book a slat for every I/O, the others none (queued and
// clone.run agree on which is which).
func TestSlatForQueuedEnginesOnly(t *testing.T) {
	dir := diskDir(t)
	for _, tc := range []struct {
		args []string
		slat bool
	}{
		{[]string{"--ioengine=psync"}, false},
		{[]string{"--ioengine=pvsync2"}, false},
		{[]string{"--ioengine=psync", "--io_submit_mode=offload", "--iodepth=2"}, true},
		{[]string{"--ioengine=libaio", "--iodepth=2"}, true},
		{[]string{"--ioengine=io_uring", "--iodepth=2"}, true},
		{[]string{"--ioengine=posixaio", "--iodepth=2"}, true},
		{[]string{"--ioengine=null"}, false},
		{[]string{"--ioengine=null", "--iodepth=4"}, true},
	} {
		args := append([]string{"--name=s", "--rw=randwrite", "--size=256k", "--direct=1"}, tc.args...)
		w, _, err := runArgs(t, dir, args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		ds := totals(t, w).dir[dirWrite]
		want := int64(0)
		if tc.slat {
			want = ds.ios
		}
		if ds.ios != 64 || ds.slat.Count() != want || ds.lat.Count() != ds.ios {
			t.Errorf("%v: %d writes, slat of %d, lat of %d; want 64, %d, 64", tc.args, ds.ios, ds.slat.Count(), ds.lat.Count(), want)
		}
	}
}
