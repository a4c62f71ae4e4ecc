package fio

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/hist"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// A worker's summary is fio's json+ with a "writepath" member in each job
// and at the top. Those members carry what fio's JSON rounds or leaves
// out, so that decodeSummary rebuilds the worker's report rows bit for bit
// and the client prints and merges them as one fio would: every histogram
// in hist's encoding (json+ bins exist only where percentiles are on),
// the exact latency sums, the bandwidth and IOPS samples' moments, the
// raw depth counts behind fio's percentages, the error text.

// maxSummaryEntries bounds the report rows a summary may hold (fio's own
// limit on jobs, --max-jobs, is 4096 clones); a worker sending more is
// refused rather than trusted with memory.
const maxSummaryEntries = 4096

// exactJSON is an entry's exact member.
func exactJSON(e entry, v *view) obj {
	st := e.st
	dirs := make([]obj, 0, len(st.dir))
	for d := range st.dir {
		ds := &st.dir[d]
		dirs = append(dirs, obj{
			{"ios", ds.ios}, {"bytes", ds.bytes}, {"short", ds.short},
			{"clat_sum", ds.clatSum}, {"lat_sum", ds.latSum}, {"slat_sum", ds.slatSum},
			{"clat", encodeHist(ds.clat)}, {"lat", encodeHist(ds.lat)}, {"slat", encodeHist(ds.slat)},
			{"bw", samplesJSON(ds.bw)}, {"iops", samplesJSON(ds.iops)},
		})
	}
	errText := ""
	if e.err != nil {
		errText = e.err.Error()
	}
	return obj{
		{"job", jobIndex(v.spec, e.job)}, {"jobs", st.jobs}, {"error", errText}, {"errno", errnoOf(e.err)},
		{"runtime_ns", int64(st.runtime)}, {"wall_ns", int64(st.wall)},
		{"usr_ns", int64(st.usage.usr)}, {"sys_ns", int64(st.usage.sys)},
		{"ctx", st.usage.ctx}, {"majf", st.usage.majf}, {"minf", st.usage.minf},
		{"level", st.level[:]}, {"submit", st.submit[:]}, {"complete", st.complete[:]},
		{"submits", st.submits}, {"completes", st.completes},
		{"sync_ios", st.syncIOs}, {"datasync_ios", st.datasyncIOs}, {"late", st.late},
		{"sync", encodeHist(st.syncLat)}, {"dirs", dirs},
	}
}

// runExactJSON is the run's exact member.
func runExactJSON(v *view) obj {
	notes := v.notes
	if notes == nil {
		notes = []string{}
	}
	return obj{
		{"version", v.version}, {"start_ns", v.start.UnixNano()}, {"elapsed_ns", int64(v.elapsed)},
		{"pid", v.pid}, {"threads", v.threads}, {"procs", v.procs}, {"notes", notes},
	}
}

func samplesJSON(s samples) obj {
	return obj{{"n", s.n}, {"min", exactFloat(s.min)}, {"max", exactFloat(s.max)},
		{"mean", exactFloat(s.mean)}, {"m2", exactFloat(s.m2)}}
}

// encodeHist is h in hist's encoding; "" if it cannot be encoded (it
// always can: one geometry, in memory).
func encodeHist(h *hist.Histogram) string {
	b, err := h.Encode()
	if err != nil {
		return ""
	}
	return string(b)
}

// jobIndex is j's position in spec.Jobs (-1: not found, cannot happen for
// a run of spec).
func jobIndex(spec *fiov1.Spec, j *fiov1.Job) int {
	for i, sj := range spec.Jobs {
		if sj == j {
			return i
		}
	}
	return -1
}

// The decoded forms of the members above, and of the fio fields read back.
type (
	summaryJSON struct {
		Jobs      []summaryJob   `json:"jobs"`
		DiskUtil  []summaryDisk  `json:"disk_util"`
		Writepath *summaryRunExt `json:"writepath"`
	}
	summaryRunExt struct {
		Version   string   `json:"version"`
		StartNs   int64    `json:"start_ns"`
		ElapsedNs int64    `json:"elapsed_ns"`
		Pid       int      `json:"pid"`
		Threads   int      `json:"threads"`
		Procs     int      `json:"procs"`
		Notes     []string `json:"notes"`
	}
	summaryJob struct {
		Name      string         `json:"jobname"`
		Group     int            `json:"groupid"`
		Writepath *summaryJobExt `json:"writepath"`
	}
	summaryJobExt struct {
		Job        int            `json:"job"`
		Jobs       int            `json:"jobs"`
		Error      string         `json:"error"`
		Errno      int            `json:"errno"`
		RuntimeNs  int64          `json:"runtime_ns"`
		WallNs     int64          `json:"wall_ns"`
		UsrNs      int64          `json:"usr_ns"`
		SysNs      int64          `json:"sys_ns"`
		Ctx        int64          `json:"ctx"`
		Majf       int64          `json:"majf"`
		Minf       int64          `json:"minf"`
		Level      []int64        `json:"level"`
		Submit     []int64        `json:"submit"`
		Complete   []int64        `json:"complete"`
		Submits    int64          `json:"submits"`
		Completes  int64          `json:"completes"`
		SyncIOs    int64          `json:"sync_ios"`
		DataSyncIO int64          `json:"datasync_ios"`
		Late       int64          `json:"late"`
		Sync       string         `json:"sync"`
		Dirs       []summaryDirEx `json:"dirs"`
	}
	summaryDirEx struct {
		IOs     int64          `json:"ios"`
		Bytes   int64          `json:"bytes"`
		Short   int64          `json:"short"`
		ClatSum int64          `json:"clat_sum"`
		LatSum  int64          `json:"lat_sum"`
		SlatSum int64          `json:"slat_sum"`
		Clat    string         `json:"clat"`
		Lat     string         `json:"lat"`
		Slat    string         `json:"slat"`
		BW      summarySamples `json:"bw"`
		IOPS    summarySamples `json:"iops"`
	}
	summarySamples struct {
		N                  int64
		Min, Max, Mean, M2 float64
	}
	summaryDisk struct {
		Name        string  `json:"name"`
		ReadIOs     uint64  `json:"read_ios"`
		WriteIOs    uint64  `json:"write_ios"`
		ReadMerges  uint64  `json:"read_merges"`
		WriteMerges uint64  `json:"write_merges"`
		ReadTicks   uint64  `json:"read_ticks"`
		WriteTicks  uint64  `json:"write_ticks"`
		InQueue     uint64  `json:"in_queue"`
		Util        float64 `json:"util"`
	}
)

// errSummary wraps every failure to read a worker's summary.
var errSummary = errors.New("fio summary")

// decodeSummary rebuilds a worker's view of a run of spec from its
// summary. The summary comes over the network from a worker: every index,
// array length and histogram is checked, and nothing in it can panic or
// allocate beyond its own size.
func decodeSummary(b []byte, spec *fiov1.Spec, host string) (*view, error) {
	var s summaryJSON
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w of %s: %w", errSummary, host, err)
	}
	if s.Writepath == nil {
		return nil, fmt.Errorf("%w of %s: no writepath member (a worker older than this client?)", errSummary, host)
	}
	if len(s.Jobs) > maxSummaryEntries {
		return nil, fmt.Errorf("%w of %s: %d jobs, at most %d", errSummary, host, len(s.Jobs), maxSummaryEntries)
	}
	x := s.Writepath
	v := &view{version: x.Version, start: time.Unix(0, x.StartNs), elapsed: time.Duration(x.ElapsedNs),
		spec: spec, threads: x.Threads, procs: x.Procs, pid: x.Pid, notes: x.Notes, host: host}
	for i, sj := range s.Jobs {
		e, err := decodeEntry(sj, spec)
		if err != nil {
			return nil, fmt.Errorf("%w of %s: job %d (%.64q): %w", errSummary, host, i, sj.Name, err)
		}
		v.entries = append(v.entries, e)
	}
	shareBandwidth(v.entries)
	for _, d := range s.DiskUtil {
		v.disks = append(v.disks, diskUtil{name: d.Name, util: d.Util, d: diskStat{
			readIOs: d.ReadIOs, writeIOs: d.WriteIOs, readMerges: d.ReadMerges, writeMerges: d.WriteMerges,
			readTicks: d.ReadTicks, writeTicks: d.WriteTicks, inQueue: d.InQueue}})
	}
	return v, nil
}

// decodeEntry rebuilds one report row.
func decodeEntry(sj summaryJob, spec *fiov1.Spec) (entry, error) {
	x := sj.Writepath
	switch {
	case x == nil:
		return entry{}, errors.New("no writepath member")
	case x.Job < 0 || x.Job >= len(spec.Jobs):
		return entry{}, fmt.Errorf("job index %d outside the spec's %d jobs", x.Job, len(spec.Jobs))
	case (len(x.Dirs) != 2 && len(x.Dirs) != nDirs) || len(x.Level) != 7 || len(x.Submit) != 7 || len(x.Complete) != 7:
		return entry{}, errors.New("want 2 or 3 directions and 7 depth buckets of each kind")
	}
	st := newJobStats()
	var err error
	if st.syncLat, err = decodeHist(x.Sync); err != nil {
		return entry{}, fmt.Errorf("sync: %w", err)
	}
	for d := range x.Dirs {
		if st.dir[d], err = decodeDir(x.Dirs[d]); err != nil {
			return entry{}, fmt.Errorf("%s: %w", dirLabel[d], err)
		}
		if err := st.done.Merge(st.dir[d].clat); err != nil {
			return entry{}, fmt.Errorf("%s: %w", dirLabel[d], err)
		}
	}
	st.jobs = x.Jobs
	st.runtime, st.wall = time.Duration(x.RuntimeNs), time.Duration(x.WallNs)
	st.usage = threadUsage{usr: time.Duration(x.UsrNs), sys: time.Duration(x.SysNs), ctx: x.Ctx, majf: x.Majf, minf: x.Minf}
	copy(st.level[:], x.Level)
	copy(st.submit[:], x.Submit)
	copy(st.complete[:], x.Complete)
	st.submits, st.completes = x.Submits, x.Completes
	st.syncIOs, st.datasyncIOs, st.late = x.SyncIOs, x.DataSyncIO, x.Late
	e := entry{name: sj.Name, group: sj.Group, job: spec.Jobs[x.Job], st: st}
	if x.Error != "" || x.Errno != 0 {
		e.err = &workerError{text: x.Error, errno: unix.Errno(x.Errno)}
	}
	return e, nil
}

func decodeDir(x summaryDirEx) (dirStats, error) {
	ds := dirStats{ios: x.IOs, bytes: x.Bytes, short: x.Short, clatSum: x.ClatSum, latSum: x.LatSum, slatSum: x.SlatSum,
		bw: x.BW.samples(), iops: x.IOPS.samples()}
	var err error
	for _, h := range []struct {
		dst **hist.Histogram
		enc string
		at  string
	}{{&ds.clat, x.Clat, "clat"}, {&ds.lat, x.Lat, "lat"}, {&ds.slat, x.Slat, "slat"}} {
		if *h.dst, err = decodeHist(h.enc); err != nil {
			return ds, fmt.Errorf("%s: %w", h.at, err)
		}
	}
	return ds, nil
}

func (s summarySamples) samples() samples {
	return samples{n: s.N, min: s.Min, max: s.Max, mean: s.Mean, m2: s.M2}
}

// decodeHist reads a histogram through hist's checks (size, geometry).
func decodeHist(enc string) (*hist.Histogram, error) {
	if enc == "" {
		return nil, errors.New("histogram missing")
	}
	return hist.Decode([]byte(enc))
}

// workerError is a job's error as a worker reported it: its text, and the
// errno fio's "error" field shows.
type workerError struct {
	text  string
	errno unix.Errno
}

func (e *workerError) Error() string { return e.text }

// Unwrap gives errnoOf the worker's errno (nil when it had none).
func (e *workerError) Unwrap() error {
	if e.errno == 0 {
		return nil
	}
	return e.errno
}
