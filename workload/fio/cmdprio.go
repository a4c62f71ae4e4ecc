package fio

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/hist"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// Linux I/O priority classes (ioprio.h); an I/O priority value is
// class<<13 | level.
const (
	ioprioClassRT  = 1
	ioprioClassMax = 3
	ioprioLevelMax = 7
	// iocbFlagIOPrio is IOCB_FLAG_IOPRIO: the iocb's aio_reqprio is used.
	iocbFlagIOPrio = 1 << 1
)

func ioprioValue(class, level uint32) uint16 { return uint16(class<<13 | level) }

// prioEntry is one cmdprio_bssplit entry: I/Os of bs bytes carry ioprio
// perc percent of the time.
type prioEntry struct {
	bs     uint64
	perc   uint32
	ioprio uint16
	idx    uint8 // index into the direction's prios
}

// cmdPrio is a clone's resolved cmdprio options (fio's engines/cmdprio.c):
// per direction the priorities its I/Os can carry, index 0 being the
// job's own (0: none set), and how one is drawn for each I/O.
type cmdPrio struct {
	prios   [2][]uint16
	perc    [2]uint32 // cmdprio_percentage mode
	percIdx [2]uint8
	split   [2][]prioEntry // cmdprio_bssplit mode, sorted by bs
	bssplit bool
	rand    *rand.Rand
}

// usesCmdprio reports whether the job gives any cmdprio option a share.
func usesCmdprio(j *fiov1.Job) bool {
	for _, p := range j.CmdprioPercentage {
		if p > 0 {
			return true
		}
	}
	return strings.TrimSpace(j.CmdprioBssplit) != ""
}

// at is v[d], or 0 when v does not reach d.
func at32(v []uint32, d int) uint32 {
	if d < len(v) {
		return v[d]
	}
	return 0
}

// newCmdPrio resolves a job's cmdprio options, or nil when it sets none;
// does says which directions the job issues.
func newCmdPrio(j *fiov1.Job, seed uint64, does func(int) bool) (*cmdPrio, error) {
	if !usesCmdprio(j) {
		return nil, nil
	}
	p := &cmdPrio{rand: rand.New(rand.NewPCG(seed, 0xc3d9)), bssplit: strings.TrimSpace(j.CmdprioBssplit) != ""}
	var split [2][]prioEntry
	if p.bssplit {
		var err error
		if split, err = parseCmdprioSplit(j.CmdprioBssplit); err != nil {
			return nil, err
		}
	}
	for d := 0; d < 2; d++ {
		if !does(d) {
			continue
		}
		class := at32(j.CmdprioClass, d)
		if class == 0 {
			class = ioprioClassRT // fio: cmdprio without a class is real time
		}
		implicit := ioprioValue(class, at32(j.CmdprioLevel, d))
		p.prios[d] = []uint16{uint16(j.Ioprio)} // the job's own (prioclass, prio), 0 without
		if !p.bssplit {
			p.perc[d] = at32(j.CmdprioPercentage, d)
			if p.perc[d] > 0 {
				p.percIdx[d] = p.index(d, implicit)
			}
			continue
		}
		for _, e := range split[d] {
			if e.ioprio == 0xffff {
				e.ioprio = implicit
			}
			e.idx = p.index(d, e.ioprio)
			p.split[d] = append(p.split[d], e)
		}
	}
	return p, nil
}

// index is the position of ioprio among direction d's priorities, added
// when new.
func (p *cmdPrio) index(d int, ioprio uint16) uint8 {
	for i, v := range p.prios[d] {
		if v == ioprio {
			return uint8(i)
		}
	}
	p.prios[d] = append(p.prios[d], ioprio)
	return uint8(len(p.prios[d]) - 1)
}

// pick draws the priority of one I/O of n bytes in direction d, as fio's
// fio_cmdprio_set_ioprio: ok=false leaves the job's own.
func (p *cmdPrio) pick(d int, n uint64) (ioprio uint16, idx uint8, ok bool) {
	if d >= len(p.prios) {
		return 0, 0, false // fio's cmdprio leaves trims alone
	}
	if !p.bssplit {
		if p.perc[d] == 0 || p.rand.Uint32N(100) >= p.perc[d] {
			return 0, 0, false
		}
		return p.prios[d][p.percIdx[d]], p.percIdx[d], true
	}
	entries := p.split[d]
	i := sort.Search(len(entries), func(i int) bool { return entries[i].bs >= n })
	if i == len(entries) || entries[i].bs != n {
		return 0, 0, false
	}
	total := uint32(0)
	for k := i; k < len(entries) && entries[k].bs == n; k++ {
		total += entries[k].perc
	}
	r := p.rand.Uint32N(100)
	if r >= total {
		return 0, 0, false
	}
	acc := uint32(0)
	for k := i; k < len(entries) && entries[k].bs == n; k++ {
		if acc += entries[k].perc; r < acc {
			return entries[k].ioprio, entries[k].idx, true
		}
	}
	return 0, 0, false
}

// parseCmdprioSplit reads cmdprio_bssplit=, per direction ("R,W[,T]", the
// trim part unused) entries bs/perc[/class/level] separated by ':'; an
// entry without class and level takes cmdprio_class/cmdprio (ioprio
// 0xffff until resolved). Zero-percent entries are dropped, as in fio.
func parseCmdprioSplit(v string) ([2][]prioEntry, error) {
	var out [2][]prioEntry
	parts, set := splitDirs(strings.TrimSpace(v))
	for d := 0; d < 2; d++ {
		if !set[d] {
			continue
		}
		for _, e := range strings.Split(parts[d], ":") {
			if e == "" {
				break
			}
			f := strings.Split(e, "/")
			if len(f) != 1 && len(f) != 2 && len(f) != 4 {
				return out, fmt.Errorf("%q: want bs/percent or bs/percent/class/level", e)
			}
			bs, err := parseSize(f[0])
			if err != nil {
				return out, err
			}
			pe := prioEntry{bs: bs, ioprio: 0xffff}
			if len(f) > 1 && f[1] != "" {
				n, err := parseUint(f[1], 0, 1<<31)
				if err != nil {
					return out, err
				}
				pe.perc = uint32(min(n, 100))
			}
			if len(f) == 4 {
				class, err := parseUint(f[2], 0, 1<<31)
				if err != nil {
					return out, err
				}
				level, err := parseUint(f[3], 0, 1<<31)
				if err != nil {
					return out, err
				}
				pe.ioprio = ioprioValue(uint32(min(class, ioprioClassMax)), uint32(min(level, ioprioLevelMax)))
			}
			if pe.perc > 0 {
				out[d] = append(out[d], pe)
			}
		}
		sort.SliceStable(out[d], func(a, b int) bool { return out[d][a].bs < out[d][b].bs })
		for i := 0; i < len(out[d]); {
			k, total := i, uint32(0)
			for ; k < len(out[d]) && out[d][k].bs == out[d][i].bs; k++ {
				total += out[d][k].perc
			}
			if total > 100 {
				return out, fmt.Errorf("cmdprio_bssplit total percentage for bs: %d exceeds 100", out[d][i].bs)
			}
			i = k
		}
	}
	return out, nil
}

// prioStat is one priority's latencies in one direction: clat, or lat
// with lat_percentiles, as fio's clat_prio stats.
type prioStat struct {
	ioprio uint16
	h      *hist.Histogram
	sum    int64
}

// prioStats makes the stats for a direction's priorities.
func prioStats(prios []uint16) []prioStat {
	if len(prios) == 0 {
		return nil
	}
	out := make([]prioStat, len(prios))
	for i, p := range prios {
		out[i] = prioStat{ioprio: p, h: hist.New()}
	}
	return out
}

// mergePrios adds o's priority stats into s by priority value, as fio's
// sum_thread_stats.
func mergePrios(s, o []prioStat) ([]prioStat, error) {
	for _, b := range o {
		i := 0
		for ; i < len(s) && s[i].ioprio != b.ioprio; i++ {
		}
		if i == len(s) {
			s = append(s, prioStat{ioprio: b.ioprio, h: hist.New()})
		}
		if err := s[i].h.Merge(b.h); err != nil {
			return s, err
		}
		s[i].sum += b.sum
	}
	return s, nil
}

// prioSamples counts the priorities with samples: fio reports them apart
// only when there are two or more.
func prioSamples(ps []prioStat) int {
	n := 0
	for _, p := range ps {
		if p.h.Count() > 0 {
			n++
		}
	}
	return n
}

// setJobIOPrio is fio's prioclass=/prio=: ioprio_set(IOPRIO_WHO_PROCESS,
// 0, value) on the calling thread, which is the clone's own (locked).
// It returns what gives the thread its priority back (nil: nothing set).
func setJobIOPrio(j *fiov1.Job) (restore func(), err error) {
	if !j.IoprioSet {
		return nil, nil
	}
	const whoProcess = 1
	orig, _, getErr := unix.Syscall(unix.SYS_IOPRIO_GET, whoProcess, 0, 0)
	if _, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, whoProcess, 0, uintptr(j.Ioprio)); errno != 0 {
		return nil, fmt.Errorf("job %s: ioprio_set(class %d, level %d): %w", j.Name, j.Ioprio>>13, j.Ioprio&7, errno)
	}
	if getErr != 0 {
		return nil, nil
	}
	return func() { _, _, _ = unix.Syscall(unix.SYS_IOPRIO_SET, whoProcess, 0, orig) }, nil
}

// checkCmdprio is validateJob's part for the cmdprio options.
func checkCmdprio(j *fiov1.Job, bad func(string, ...any)) {
	perc := false
	for _, p := range j.CmdprioPercentage {
		perc = perc || p > 0
	}
	given := perc || j.CmdprioBssplit != "" || len(j.CmdprioClass) > 0 || len(j.CmdprioLevel) > 0
	if !given {
		return
	}
	if j.Ioengine != fiov1.IOEngine_IO_ENGINE_LIBAIO && j.Ioengine != fiov1.IOEngine_IO_ENGINE_IO_URING {
		bad("cmdprio_percentage, cmdprio_bssplit, cmdprio_class and cmdprio are options of the libaio and io_uring engines (fio: unrecognized option)")
		return
	}
	if perc && strings.TrimSpace(j.CmdprioBssplit) != "" {
		bad("cmdprio_percentage and cmdprio_bssplit options are mutually exclusive")
	}
	if j.CmdprioBssplit != "" {
		if _, err := parseCmdprioSplit(j.CmdprioBssplit); err != nil {
			bad("cmdprio_bssplit: %v", err)
		}
	}
}

// setPrioDirs reads a per-direction small integer (cmdprio_percentage,
// cmdprio_class, cmdprio) into [read, write].
func setPrioDirs(lo, hi uint64, field func(*fiov1.Job) *[]uint32) func(*fiov1.Job, string) error {
	return func(j *fiov1.Job, v string) error {
		parts, set := splitDirs(v)
		f := field(j)
		if len(*f) < 2 {
			*f = []uint32{0, 0}
		}
		for d := 0; d < 3; d++ {
			if !set[d] {
				continue
			}
			n, err := parseUint(parts[d], lo, hi)
			if err != nil {
				return err
			}
			if d < 2 {
				(*f)[d] = uint32(n)
			}
		}
		return nil
	}
}

// setCmdprioSplit reads cmdprio_bssplit= (checked now, resolved per clone).
func setCmdprioSplit(j *fiov1.Job, v string) error {
	if _, err := parseCmdprioSplit(v); err != nil {
		return err
	}
	j.CmdprioBssplit = strings.TrimSpace(v)
	return nil
}
