package blocktrace

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// Metrics and ops as trace.bpf.c numbers them.
const (
	mD2C = iota
	mQ2D
	mBytes
	mRedo
	mSysWrite
	mFsync
	mFdatasync
	nMetrics
)

// MaxSeries bounds the series one Tick returns: a fabric interval carries at
// most 64 ops (the coordinator refuses more), and the workload's own come
// first. Series past it are dropped, counted in Snapshot.Dropped.
const MaxSeries = 48

// Tracer is the programs attached for one phase. Only the phase's interval
// goroutine calls Tick and Follow; Close may be called once more after.
type Tracer struct {
	l     *Loaded
	links []link.Link
	sysOn bool

	prev map[uint64]uint64 // cumulative count per packed key at the last Tick
	// incs are this Tick's increases per series and bucket; one scratch
	// histogram (270 KB, dense) turns each series into its encoding in
	// turn, so memory does not grow with the number of series.
	incs    map[seriesKey][]bucketInc
	scratch *hist.Histogram
	names   map[seriesKey]string
	batch   *batchReader
	cpus    int
	pids    []int
	redo    []string
	ext     *Extents
	redoAt  time.Time
	closed  bool
	snap    Snapshot
	lostAt  uint64 // stats sum at the last Tick
}

// bucketInc is one bucket's increase.
type bucketInc struct {
	idx uint32
	n   uint64
}

// seriesKey is one series: a metric of a device (0 for syscalls) and op.
type seriesKey struct {
	dev    uint32
	metric uint8
	op     uint8
}

// Snapshot is one interval's series, each in package hist's encoding
// (hist.Decode reads it). Encoded is valid until the next Tick.
type Snapshot struct {
	Encoded map[string][]byte
	// Lost counts values the programs could not count (a map full), and
	// Dropped values of series past MaxSeries, since the previous Tick.
	Lost, Dropped int64
	// Redo is where the redo files were found, nil when none is followed.
	Redo *Extents
}

func newTracer(l *Loaded) *Tracer {
	cpus, err := ebpf.PossibleCPU()
	if err != nil || cpus < 1 {
		cpus = runtime.NumCPU()
	}
	return &Tracer{l: l, prev: map[uint64]uint64{}, incs: map[seriesKey][]bucketInc{}, scratch: l.scratch, names: l.names, cpus: cpus, batch: newBatchReader(l.block.Maps[traceMapHists].FD(), cpus, 1024),
		snap: Snapshot{Encoded: map[string][]byte{}}}
}

// Syscalls reports whether the syscall series are being traced.
func (t *Tracer) Syscalls() bool { return t.sysOn }

// Follow sets the phase's own processes and redo files (beside Config's):
// a workload's managed server, found as it starts. Unchanged lists cost
// nothing; redo extents are mapped again every 10 s (a file that grows).
func (t *Tracer) Follow(pids []int, redoFiles []string) error {
	return t.follow(pids, redoFiles)
}

func (t *Tracer) follow(pids []int, redoFiles []string) error {
	pids = append(slices.Clone(t.l.cfg.PIDs), pids...)
	slices.Sort(pids)
	pids = slices.Compact(pids)
	if !slices.Equal(pids, t.pids) {
		if err := t.setPIDs(pids); err != nil {
			return err
		}
	}
	redoFiles = append(slices.Clone(t.l.cfg.RedoFiles), redoFiles...)
	slices.Sort(redoFiles)
	redoFiles = slices.Compact(redoFiles)
	if !slices.Equal(redoFiles, t.redo) || (len(redoFiles) > 0 && time.Since(t.redoAt) > 10*time.Second) {
		return t.setRedo(redoFiles)
	}
	return nil
}

func (t *Tracer) setPIDs(pids []int) error {
	m := t.l.block.Maps[traceMapTgids]
	for _, p := range t.pids {
		if !slices.Contains(pids, p) {
			_ = m.Delete(uint32(p))
		}
	}
	for _, p := range pids {
		if p <= 0 || p > 1<<22 {
			return fmt.Errorf("block tracing: pid %d out of range", p)
		}
		if err := m.Put(uint32(p), uint8(1)); err != nil {
			return fmt.Errorf("block tracing: follow pid %d: %w", p, err)
		}
	}
	t.pids = pids
	if len(pids) > 0 && !t.sysOn && t.l.sys != nil && len(t.links) > 0 {
		for _, n := range sysProgs {
			lk, err := link.AttachTracing(link.TracingOptions{Program: t.l.sys.Programs[n]})
			if err != nil {
				return fmt.Errorf("syscall tracing: attach %s: %w", n, err)
			}
			t.links = append(t.links, lk)
		}
		t.sysOn = true
	}
	return nil
}

// setRedo maps the files' extents into the programs' table. Files not
// there yet (a server still initialising) leave the table empty until a
// later Follow finds them.
func (t *Tracer) setRedo(files []string) error {
	t.redo, t.redoAt = files, time.Now()
	var v traceExtents
	if len(files) > 0 {
		ext, err := FileExtents(files)
		if err != nil {
			t.ext = nil
			t.redoAt = time.Time{} // try again at the next Follow
			return t.l.block.Maps[traceMapRedo].Put(uint32(0), &v)
		}
		t.ext = ext
		v.Dev, v.N = ext.dev, uint32(len(ext.ranges))
		for i, r := range ext.ranges {
			v.Start[i], v.End[i] = r.start, r.end
		}
	} else {
		t.ext = nil
	}
	return t.l.block.Maps[traceMapRedo].Put(uint32(0), &v)
}

// Tick returns every series' values since the previous Tick (the first:
// since Start). It does not fail the phase: a read error yields an empty
// snapshot with the error.
func (t *Tracer) Tick() (*Snapshot, error) {
	for k, v := range t.incs {
		t.incs[k] = v[:0]
	}
	clear(t.snap.Encoded)
	t.snap.Lost, t.snap.Dropped, t.snap.Redo = 0, 0, t.ext
	if t.closed {
		return &t.snap, errors.New("block tracing: tracer closed")
	}
	if err := t.readHists(); err != nil {
		return &t.snap, err
	}
	t.snap.Lost = t.readLost()
	return &t.snap, nil
}

// readHists reads every key's increase, then encodes each series.
func (t *Tracer) readHists() error {
	if err := t.batch.each(t.add); err != nil {
		return err
	}
	for sk, incs := range t.incs {
		if len(incs) == 0 {
			continue
		}
		t.scratch.Reset()
		for _, b := range incs {
			t.scratch.RecordN(indexValue(b.idx), int64(b.n))
		}
		enc, err := t.scratch.Encode()
		if err != nil {
			return fmt.Errorf("block tracing: encode %s: %w", t.names[sk], err)
		}
		t.snap.Encoded[t.names[sk]] = enc
	}
	return nil
}

// add takes one key (struct hkey packed little-endian: dev, idx<<32,
// metric<<48, op<<56) and its per-CPU cumulative counts.
func (t *Tracer) add(key uint64, percpu []uint64) {
	var total uint64
	for _, v := range percpu {
		total += v
	}
	inc := total - t.prev[key]
	if inc == 0 {
		return
	}
	t.prev[key] = total
	sk := seriesKey{dev: uint32(key), metric: uint8(key >> 48), op: uint8(key >> 56)}
	incs, ok := t.incs[sk]
	if !ok {
		if len(t.incs) >= MaxSeries {
			t.snap.Dropped += int64(inc)
			return
		}
		if _, named := t.names[sk]; !named {
			t.names[sk] = t.seriesName(sk)
		}
	}
	t.incs[sk] = append(incs, bucketInc{idx: uint32(key>>32) & 0xffff, n: inc})
}

func (t *Tracer) seriesName(k seriesKey) string {
	op := "other"
	if int(k.op) < len(series.Ops) {
		op = series.Ops[k.op]
	}
	switch k.metric {
	case mD2C, mQ2D, mBytes:
		return series.Block(t.diskName(k.dev), op, [...]string{series.D2C, series.Q2D, series.Bytes}[k.metric])
	case mRedo:
		return series.Redo(op)
	case mSysWrite:
		return series.SysWriteBytes
	case mFsync:
		return series.SysFsync
	}
	return series.SysFdatasync
}

func (t *Tracer) diskName(dev uint32) string {
	for _, d := range t.l.disks {
		if d.dev == dev {
			return d.name
		}
	}
	return nameOfDev(sysBlock, dev)
}

// readLost is the increase of the programs' failure counters.
func (t *Tracer) readLost() int64 {
	var sum uint64
	for i := range uint32(2) {
		var per []uint64
		if err := t.l.block.Maps[traceMapStats].Lookup(i, &per); err == nil {
			for _, v := range per {
				sum += v
			}
		}
	}
	inc := sum - t.lostAt
	t.lostAt = sum
	return int64(inc)
}

// Close detaches the programs; the Loaded may Start another Tracer.
func (t *Tracer) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	t.detach()
	t.l.release()
	return nil
}
