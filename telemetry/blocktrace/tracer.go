package blocktrace

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/hist"
)

// Config says what to trace.
type Config struct {
	// Devices are the block devices to trace by name (/proc/diskstats
	// names; a partition means its disk). Empty traces every disk.
	Devices []string
	// PIDs and Comms name the processes of interest (Comms: the process
	// name, i.e. the thread group leader's comm, at most 4 of at most 15
	// bytes) whose write syscalls and fsync/fdatasync are traced beside
	// those a phase follows (Tracer.Follow).
	PIDs  []int
	Comms []string
	// RedoFiles are files whose extents count block requests as redo
	// I/O (redo.read.bytes, redo.write.bytes), beside those a phase follows.
	RedoFiles []string

	// probes loads the test programs (hdr_index_probe, record_probe) that
	// run the kernel's index and record through BPF_PROG_TEST_RUN. Only
	// tests want them, and the verifier's work on record_probe's loop of
	// 64 records was most of a worker's start-up: 0.29-0.94 s of the
	// bpf(2) time under strace on a busy machine, against 0.3 s for
	// block_rq_issue and under 15 ms for each other program.
	probes bool
}

// probeProgs are the test programs (Config.probes).
var probeProgs = []string{traceProgHdrIndexProbe, traceProgRecordProbe}

const (
	maxComms = 4
	maxDevs  = 16 // MAX_DEVS in trace.bpf.c
	maxTgids = 64 // MAX_TGIDS
)

// Loaded is the programs and maps in the kernel, attached to nothing until
// Start. One per process: Start hands out one Tracer at a time.
type Loaded struct {
	cfg   Config
	block *ebpf.Collection
	sys   *ebpf.Collection // nil where the syscall programs could not load
	// SysErr says why the syscall series are missing (sys is nil).
	SysErr error
	disks  []disk // traced disks (Config.Devices), by name
	mu     sync.Mutex
	active bool   // a Tracer is attached (protected by mu)
	gen    uint64 // the in-flight table's generation (protected by mu)
	cpus   int    // possible CPUs: the per-CPU maps' width
	nPages int    // the page pool's size, per CPU
	// The rest is the attached Tracer's, kept across phases: the encoding
	// histogram, the series' names by number, the batch buffers of the
	// per-CPU arrays, each CPU's page counts at the last Tick.
	scratch            *hist.Histogram
	names              [nSeriesKern]string
	pages, dirs, stats *arrayBatch
	statsBuf           []uint64
	prev               [][]uint32
}

// Programs by what they attach to.
var blockProgs = []string{traceProgBlockRqInsert, traceProgBlockRqIssue, traceProgBlockRqComplete, traceProgBlockRqRequeue, traceProgBlockRqMerge}

// sysProgs are the syscall programs: they cost every syscall on the host
// a tracepoint, so they are attached only while there are processes of
// interest.
var sysProgs = []string{traceProgSysEnter, traceProgSysExit}

// Load checks cfg, loads the programs and maps into the kernel and
// returns them unattached. An error wrapping ErrUnavailable means this
// kernel or process cannot trace; other errors are cfg's.
func Load(cfg Config) (*Loaded, error) {
	l := &Loaded{cfg: cfg, scratch: hist.New()}
	for _, n := range cfg.Devices {
		d, _, err := diskOf(sysBlock, n)
		if err != nil {
			return nil, fmt.Errorf("block tracing: %w", err)
		}
		if !containsDisk(l.disks, d) {
			l.disks = append(l.disks, d)
		}
	}
	if len(l.disks) > maxDevs {
		return nil, fmt.Errorf("block tracing: %d disks, at most %d", len(l.disks), maxDevs)
	}
	if len(cfg.Comms) > maxComms {
		return nil, fmt.Errorf("block tracing: %d process names, at most %d", len(cfg.Comms), maxComms)
	}
	for _, c := range cfg.Comms {
		if c == "" || len(c) > 15 {
			return nil, fmt.Errorf("block tracing: process name %q: want 1 to 15 bytes (the kernel's comm)", c)
		}
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		return nil, fmt.Errorf("%w: no kernel BTF (/sys/kernel/btf/vmlinux): %v", ErrUnavailable, err)
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	spec, err := loadTrace()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	l.cpus, err = ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	l.nPages = poolPages(l.cpus)
	spec.Maps[traceMapPages].MaxEntries = uint32(l.nPages)
	if err := l.setConstants(spec); err != nil {
		return nil, err
	}
	// One decoded kernel BTF for both loads, dropped after them: decoding
	// it is the load's main cost (~20 MB of heap), which is handed back to
	// the OS at once, as a worker stays up for days.
	cache := btf.NewCache()
	kernel, err := cache.Kernel()
	if err != nil {
		return nil, fmt.Errorf("%w: kernel BTF: %v", ErrUnavailable, err)
	}
	// CO-RE against vmlinux's types alone: every type the programs read
	// (request, gendisk, task_struct, pt_regs) is the core kernel's, and
	// without KernelTypes cilium/ebpf also decodes the BTF of every loaded
	// module for the relocations (on a distribution kernel dozens, decoded
	// for nothing). The attach targets come from the same cached spec.
	opts := ebpf.CollectionOptions{Cache: cache, Programs: ebpf.ProgramOptions{KernelTypes: kernel}}
	if err := l.loadBlock(spec, opts); err != nil {
		return nil, err
	}
	l.sys, l.SysErr = loadSys(spec, l.block, opts)
	debug.FreeOSMemory()
	l.pages = newArrayBatch(l.block.Maps[traceMapPages].FD(), pageBytes, l.cpus)
	l.dirs = newArrayBatch(l.block.Maps[traceMapDirs].FD(), dirBytes, l.cpus)
	l.stats = newArrayBatch(l.block.Maps[traceMapStats].FD(), 8, l.cpus)
	l.prev = make([][]uint32, l.cpus)
	return l, nil
}

// poolPages sizes the per-CPU page pool: 2,048 pages (2 MiB a CPU; a busy
// phase with a dozen series uses a few hundred) up to 8 CPUs, then what
// 16 MiB of kernel memory holds, and at least 512 a CPU. Values past the
// pool are counted as lost (trace.lost).
func poolPages(cpus int) int {
	return max(512, min(2048, 16<<20/(cpus*pageBytes)))
}

func containsDisk(ds []disk, d disk) bool {
	for _, x := range ds {
		if x.dev == d.dev {
			return true
		}
	}
	return false
}

func (l *Loaded) setConstants(spec *ebpf.CollectionSpec) error {
	var comms [maxComms][16]byte
	for i, c := range l.cfg.Comms {
		copy(comms[i][:], c)
	}
	var devs [maxDevs]uint32
	for i, d := range l.disks {
		devs[i] = d.dev
	}
	consts := map[string]any{traceVarN_devs: uint32(len(l.disks)), traceVarDevs: devs, traceVarN_pages: uint32(l.nPages),
		traceVarN_comms: uint32(len(l.cfg.Comms)), traceVarComms: comms,
		// This architecture's syscall numbers.
		traceVarNrWrite: int64(unix.SYS_WRITE), traceVarNrPwrite64: int64(unix.SYS_PWRITE64), traceVarNrWritev: int64(unix.SYS_WRITEV),
		traceVarNrPwritev: int64(unix.SYS_PWRITEV), traceVarNrPwritev2: int64(unix.SYS_PWRITEV2),
		traceVarNrFsync: int64(unix.SYS_FSYNC), traceVarNrFdatasync: int64(unix.SYS_FDATASYNC)}
	for name, v := range consts {
		vs, ok := spec.Variables[name]
		if !ok {
			return fmt.Errorf("block tracing: program constant %s missing (regenerate with make bpf)", name)
		}
		if err := vs.Set(v); err != nil {
			return fmt.Errorf("block tracing: %s: %w", name, err)
		}
	}
	return nil
}

// loadBlock loads every map with the block programs (and the test probes
// if asked).
func (l *Loaded) loadBlock(spec *ebpf.CollectionSpec, opts ebpf.CollectionOptions) error {
	bs := spec.Copy()
	for _, name := range sysProgs {
		delete(bs.Programs, name)
	}
	if !l.cfg.probes {
		for _, name := range probeProgs {
			delete(bs.Programs, name)
		}
	}
	c, err := ebpf.NewCollectionWithOptions(bs, opts)
	if err != nil {
		return fmt.Errorf("%w: load block programs: %v", ErrUnavailable, verifierSummary(err))
	}
	l.block = c
	return nil
}

// loadSys loads the syscall programs, sharing block's maps, so that a
// kernel refusing them still runs the block series.
func loadSys(spec *ebpf.CollectionSpec, block *ebpf.Collection, opts ebpf.CollectionOptions) (*ebpf.Collection, error) {
	ss := spec.Copy()
	for name := range ss.Programs {
		if !slices.Contains(sysProgs, name) {
			delete(ss.Programs, name)
		}
	}
	// Every map is block's (the counts, the followed processes, and no
	// second copy of the in-flight tables), but for the constants, which
	// are the same.
	repl := map[string]*ebpf.Map{}
	for name := range ss.Maps {
		if m := block.Maps[name]; m != nil && name != ".rodata" {
			repl[name] = m
		}
	}
	opts.MapReplacements = repl
	c, err := ebpf.NewCollectionWithOptions(ss, opts)
	if err != nil {
		return nil, fmt.Errorf("syscall tracing: %v", verifierSummary(err))
	}
	return c, nil
}

// verifierSummary keeps a verifier error to its cause and last lines.
func verifierSummary(err error) error {
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		return fmt.Errorf("%+3v", ve)
	}
	return err
}

// Syscalls reports whether the syscall series can be traced.
func (l *Loaded) Syscalls() bool { return l.sys != nil }

// Disks are the traced disks' names (nil: every disk).
func (l *Loaded) Disks() []string {
	var out []string
	for _, d := range l.disks {
		out = append(out, d.name)
	}
	return out
}

// Close unloads everything. A Tracer still attached stops counting.
func (l *Loaded) Close() error {
	if l.sys != nil {
		l.sys.Close()
	}
	if l.block != nil {
		l.block.Close()
	}
	return nil
}

// Start attaches the programs for one phase and returns the Tracer that
// reads them; the first Tick counts from now. Only one Tracer is attached
// at a time (ErrBusy).
func (l *Loaded) Start() (*Tracer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active {
		return nil, ErrBusy
	}
	t := newTracer(l)
	if err := t.attach(); err != nil {
		t.detach()
		return nil, err
	}
	if err := t.follow(nil, nil); err != nil {
		t.detach()
		return nil, err
	}
	l.active = true
	return t, nil
}

func (l *Loaded) release() {
	l.mu.Lock()
	l.active = false
	l.mu.Unlock()
}

func (t *Tracer) attach() error {
	// Counts from an earlier phase go: the maps start empty, so a long
	// series of phases never fills them.
	for _, name := range []string{traceMapInflight, traceMapSyscalls} {
		if err := clearMap(t.l.block.Maps[name]); err != nil {
			return fmt.Errorf("block tracing: clear %s: %w", name, err)
		}
	}
	if err := t.l.clearCounts(); err != nil {
		return err
	}
	if err := t.l.setTgids(nil); err != nil { // follow sets the phase's
		return err
	}
	// A new generation frees every slot of the in-flight table at once.
	t.l.gen++
	if err := t.l.block.Maps[traceMapGeneration].Put(uint32(0), t.l.gen); err != nil {
		return fmt.Errorf("block tracing: generation: %w", err)
	}
	attachAll := func(c *ebpf.Collection, names []string) error {
		for _, n := range names {
			lk, err := link.AttachTracing(link.TracingOptions{Program: c.Programs[n]})
			if err != nil {
				return fmt.Errorf("attach %s: %w", n, err)
			}
			t.links = append(t.links, lk)
		}
		return nil
	}
	if err := attachAll(t.l.block, blockProgs); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if t.l.sys != nil && t.wantSys() {
		if err := attachAll(t.l.sys, sysProgs); err != nil {
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		t.sysOn = true
	}
	return nil
}

// wantSys: the syscall programs cost every write(2) on the host a
// trampoline, so they run only with processes of interest.
func (t *Tracer) wantSys() bool { return len(t.l.cfg.PIDs) > 0 || len(t.l.cfg.Comms) > 0 }

func (t *Tracer) detach() {
	for _, lk := range t.links {
		lk.Close()
	}
	t.links = nil
}

// clearCounts empties the directories, the pages handed out and the
// counters (the programs are detached), and the Tracer's view of them.
func (l *Loaded) clearCounts() error {
	st, err := l.readStats()
	if err != nil {
		return err
	}
	used := 0
	for c := range l.cpus {
		used = max(used, int(st[stPages*l.cpus+c])+1)
	}
	if err := l.pages.zero(min(used, l.nPages)); err != nil {
		return err
	}
	if err := l.dirs.zero(nSeriesKern); err != nil {
		return err
	}
	if err := l.stats.zero(stMax); err != nil {
		return err
	}
	for c := range l.prev {
		clear(l.prev[c])
	}
	return nil
}

func clearMap(m *ebpf.Map) error {
	var keys [][]byte
	it := m.Iterate()
	var k, v []byte
	for it.Next(&k, &v) {
		keys = append(keys, append([]byte(nil), k...))
	}
	if err := it.Err(); err != nil {
		return err
	}
	for _, k := range keys {
		if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
	}
	return nil
}
