package blocktrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cilium/ebpf/link"

	"github.com/writepath/writepath/hist"
	"github.com/writepath/writepath/telemetry/blocktrace/series"
)

// Series as trace.bpf.c numbers them: block series by device slot, metric
// and op, then the redo and syscall series.
const (
	mD2C = iota
	mQ2D
	mBytes
	nBlockMetrics
)

const (
	nOps        = 5 // N_OPS: read, write, flush, discard, other
	sRedo       = maxDevs * nBlockMetrics * nOps
	sSysWrite   = sRedo + 2
	sFsync      = sSysWrite + 1
	sFdatasync  = sSysWrite + 2
	nSeriesKern = sSysWrite + 3
)

// The counts' layout in the kernel (trace.bpf.c): a series' bucket
// indexes (hdrIndex up to hist.Highest's, then one for overflow) in pages
// of pageW, handed out per CPU; a page's owner is series*pagesPerSeries +
// range + 1.
const (
	hdrMaxIndex    = 33420 // hdrIndex(hist.Highest)
	denseOverflow  = hdrMaxIndex + 1
	pageShift      = 8
	pageW          = 1 << pageShift
	pagesPerSeries = (denseOverflow + pageW) >> pageShift
	pageBytes      = 8 + 4*pageW // struct page: owner, pad, counts
	dirBytes       = 2 * (pagesPerSeries + 1)
	// Stats indexes (enum stat).
	stHistFull, stStartFull, stDevsFull, stPages, stMax = 0, 1, 2, 3, 4
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

	// prev is each CPU's pages' counts at the last Tick (pageW per page,
	// from page 0), grown as pages are handed out.
	prev [][]uint32
	// incs are this Tick's increases per series and bucket; one scratch
	// histogram (270 KB, dense) turns each series into its encoding in
	// turn, so memory does not grow with the number of series.
	incs    [nSeriesKern][]bucketInc
	nseries int // series with increases this Tick
	scratch *hist.Histogram
	cpus    int
	pids    []int
	redo    []string
	ext     *Extents
	redoAt  time.Time
	closed  bool
	snap    Snapshot
	lostAt  uint64 // lost counters' sum at the last Tick
}

// bucketInc is one bucket's increase.
type bucketInc struct {
	idx uint32 // hdrIndex
	n   uint64
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
	return &Tracer{l: l, prev: l.prev, scratch: l.scratch, cpus: l.cpus, snap: Snapshot{Encoded: map[string][]byte{}}}
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
	if len(pids) > maxTgids {
		return fmt.Errorf("block tracing: %d processes to follow, at most %d", len(pids), maxTgids)
	}
	for _, p := range pids {
		if p <= 0 || p > 1<<22 {
			return fmt.Errorf("block tracing: pid %d out of range", p)
		}
	}
	if err := t.l.setTgids(pids); err != nil {
		return err
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

// setTgids writes the followed processes into the list the programs do
// not read, then switches them to it.
func (l *Loaded) setTgids(pids []int) error {
	vars := l.block.Variables
	var active uint32
	if err := vars[traceVarTgidActive].Get(&active); err != nil {
		return fmt.Errorf("block tracing: follow: %w", err)
	}
	var lists [2][maxTgids]uint32
	var ns [2]uint32
	if err := vars[traceVarTgidList].Get(&lists); err != nil {
		return fmt.Errorf("block tracing: follow: %w", err)
	}
	if err := vars[traceVarN_tgids].Get(&ns); err != nil {
		return fmt.Errorf("block tracing: follow: %w", err)
	}
	next := (active + 1) & 1
	lists[next] = [maxTgids]uint32{}
	for i, p := range pids {
		lists[next][i] = uint32(p)
	}
	ns[next] = uint32(len(pids))
	// The list and count not in use first, then the switch.
	if err := vars[traceVarTgidList].Set(lists); err != nil {
		return fmt.Errorf("block tracing: follow: %w", err)
	}
	if err := vars[traceVarN_tgids].Set(ns); err != nil {
		return fmt.Errorf("block tracing: follow: %w", err)
	}
	if err := vars[traceVarTgidActive].Set(next); err != nil {
		return fmt.Errorf("block tracing: follow: %w", err)
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
	for i := range t.incs {
		t.incs[i] = t.incs[i][:0]
	}
	t.nseries = 0
	clear(t.snap.Encoded)
	t.snap.Lost, t.snap.Dropped, t.snap.Redo = 0, 0, t.ext
	if t.closed {
		return &t.snap, errors.New("block tracing: tracer closed")
	}
	st, err := t.l.readStats()
	if err != nil {
		return &t.snap, err
	}
	t.snap.Lost = t.lost(st)
	if err := t.readPages(st); err != nil {
		return &t.snap, err
	}
	return &t.snap, t.encode()
}

// readPages takes every page's increases since the last Tick.
func (t *Tracer) readPages(st []uint64) error {
	n := 0 // pages handed out on the busiest CPU, and page 0
	for c := range t.cpus {
		n = max(n, int(st[stPages*t.cpus+c])+1)
	}
	n = min(n, t.l.nPages)
	if n <= 1 {
		return nil
	}
	vals, err := t.l.pages.read(n)
	if err != nil {
		return err
	}
	per := t.l.pages.stride / t.cpus
	for pg := 1; pg < len(vals)/t.l.pages.stride; pg++ {
		for c := range t.cpus {
			v := vals[pg*t.l.pages.stride+c*per:][:pageBytes]
			owner := binary.LittleEndian.Uint32(v)
			// 0: not handed out on this CPU, or being handed out now (its
			// counts are read at the next Tick).
			if owner == 0 || owner > nSeriesKern*pagesPerSeries {
				continue
			}
			t.addPage(c, pg, int(owner-1)/pagesPerSeries, uint32(owner-1)%pagesPerSeries, v[8:])
		}
	}
	return nil
}

// addPage takes one CPU's page of series s, bucket range r.
func (t *Tracer) addPage(cpu, pg, s int, r uint32, counts []byte) {
	prev := t.prev[cpu]
	if need := (pg + 1) * pageW; len(prev) < need {
		prev = append(prev, make([]uint32, need-len(prev))...)
		t.prev[cpu] = prev
	}
	prev = prev[pg*pageW:][:pageW]
	for i := range pageW {
		cur := binary.LittleEndian.Uint32(counts[4*i:])
		inc := cur - prev[i] // counts wrap at 2^32
		if inc == 0 {
			continue
		}
		prev[i] = cur
		if len(t.incs[s]) == 0 {
			if t.nseries >= MaxSeries {
				t.snap.Dropped += int64(inc)
				continue
			}
			t.nseries++
		}
		idx := r<<pageShift | uint32(i)
		if idx == denseOverflow {
			idx = overflowIndex
		}
		t.incs[s] = append(t.incs[s], bucketInc{idx: idx, n: uint64(inc)})
	}
}

// encode turns each series with increases into its encoding.
func (t *Tracer) encode() error {
	for s, incs := range t.incs {
		if len(incs) == 0 {
			continue
		}
		t.scratch.Reset()
		for _, b := range incs {
			t.scratch.RecordN(indexValue(b.idx), int64(b.n))
		}
		name := t.l.seriesName(s)
		enc, err := t.scratch.Encode()
		if err != nil {
			return fmt.Errorf("block tracing: encode %s: %w", name, err)
		}
		t.snap.Encoded[name] = enc
	}
	return nil
}

// seriesName names series s, caching names by number: a device slot keeps
// its disk for the Loaded's life.
func (l *Loaded) seriesName(s int) string {
	if n := l.names[s]; n != "" {
		return n
	}
	var name string
	switch {
	case s < sRedo:
		slot, metric, op := s/(nBlockMetrics*nOps), s/nOps%nBlockMetrics, s%nOps
		dev, ok := l.slotDisk(slot)
		name = series.Block(dev, series.Ops[op], [...]string{series.D2C, series.Q2D, series.Bytes}[metric])
		if !ok {
			return name // not cached: the slot's disk is read again next time
		}
	case s < sSysWrite:
		name = series.Redo(series.Ops[s-sRedo])
	case s == sSysWrite:
		name = series.SysWriteBytes
	case s == sFsync:
		name = series.SysFsync
	default:
		name = series.SysFdatasync
	}
	l.names[s] = name
	return name
}

// slotDisk names the disk of a device slot: a traced disk's, or in
// every-disk mode the one the programs gave the slot.
func (l *Loaded) slotDisk(slot int) (string, bool) {
	if len(l.disks) > 0 {
		if slot < len(l.disks) {
			return l.disks[slot].name, true
		}
		return fmt.Sprintf("slot%d", slot), false
	}
	var devs [maxDevs]uint32
	if v := l.block.Variables[traceVarDynDevs]; v != nil && v.Get(&devs) == nil && devs[slot] != 0 {
		return nameOfDev(sysBlock, devs[slot]), true
	}
	return fmt.Sprintf("slot%d", slot), false
}

// readStats reads the programs' counters: stats index i's CPU c at i*cpus+c.
func (l *Loaded) readStats() ([]uint64, error) {
	vals, err := l.stats.read(stMax)
	if err != nil {
		return nil, err
	}
	if len(vals) < stMax*l.stats.stride {
		return nil, fmt.Errorf("block tracing: read counters: %d of %d bytes", len(vals), stMax*l.stats.stride)
	}
	out := l.statsBuf[:0]
	for i := range stMax * l.cpus {
		out = append(out, binary.LittleEndian.Uint64(vals[8*i:]))
	}
	l.statsBuf = out
	return out, nil
}

// lost is the increase of the programs' failure counters.
func (t *Tracer) lost(st []uint64) int64 {
	var sum uint64
	for _, i := range []int{stHistFull, stStartFull, stDevsFull} {
		for c := range t.cpus {
			sum += st[i*t.cpus+c]
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
