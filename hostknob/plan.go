package hostknob

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// plan is a checked set of settings: what to write, in order, and what to
// journal first.
type plan struct {
	key       string   // identifies the set (directory + canonical settings)
	order     []string // knob names in the order given, for the results
	steps     []step   // writes, in order
	changes   []Change // values before, in restore order
	resources []string // what the set holds (files, mounts)
}

// step is one knob on one target.
type step struct {
	knob   *knob
	target string // "loop0", "vm", a mount point
	qidx   int    // the queue's position, for ordering
	path   string // the file, for queue and vm knobs
	value  string // canonical
	before string // as shown
	mount  []mountOpt
	ident  string // the mount's device, for mount steps
	twin   string // a vm twin's value before ("20" for dirty_ratio when dirty_bytes is set)
}

// maxSettings bounds a set; the knobs fit many times over.
const maxSettings = 64

// plan validates settings and reads every value before. Every problem
// found is in the returned one-line error.
func (h *Host) plan(settings []Setting) (*plan, error) {
	if h.recoverErr != nil {
		return nil, h.recoverErr
	}
	set, order, err := h.normalise(settings)
	if err != nil {
		return nil, err
	}
	var t *targets
	for _, name := range order {
		if k, _ := lookup(name); k.scope != vmSysctl && t == nil {
			if t, err = h.resolve(h.cfg.Dir); err != nil {
				return nil, err
			}
		}
	}
	p := &plan{order: order}
	var errs []error
	for _, name := range order {
		k, _ := lookup(name)
		steps, err := h.steps(k, set, t)
		if err != nil {
			errs = append(errs, fmt.Errorf("host knob %s=%s: %w", name, set[name], err))
			continue
		}
		p.steps = append(p.steps, steps...)
	}
	if err := joinLine(errs); err != nil {
		return nil, err
	}
	slices.SortStableFunc(p.steps, func(a, b step) int {
		return cmpStep(a) - cmpStep(b)
	})
	p.journalFor()
	p.key = h.cfg.Dir + "\x00" + keyOf(set)
	return p, nil
}

// cmpStep orders steps: queues in resolution order, on each queue by the
// knob's rank; then vm sysctls; the remount last.
func cmpStep(s step) int {
	switch s.knob.scope {
	case vmSysctl:
		return 1 << 20
	case mountOptions:
		return 1 << 21
	}
	return s.qidx*16 + s.knob.rank
}

// normalise resolves names, applies the allow-list and refuses repeats and
// twin sysctls set together.
func (h *Host) normalise(settings []Setting) (map[string]string, []string, error) {
	if len(settings) > maxSettings {
		return nil, nil, fmt.Errorf("host knobs: %d settings; at most %d", len(settings), maxSettings)
	}
	set := map[string]string{}
	var order []string
	var errs []error
	for _, s := range settings {
		name, err := Canonical(s.Name)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !h.cfg.Allow.Allows(name):
			errs = append(errs, fmt.Errorf("host knob %s: %w (worker --allow-host %s, or all)", name, ErrNotAllowed, name))
		case slices.Contains(order, name):
			errs = append(errs, fmt.Errorf("host knob %s: %w: set twice", name, ErrBadValue))
		default:
			set[name] = s.Value
			order = append(order, name)
		}
	}
	for _, name := range order {
		if k, _ := lookup(name); k.twin != "" && slices.Contains(order, k.twin) && name < k.twin {
			errs = append(errs, fmt.Errorf("host knobs %s and %s: %w: the kernel keeps only one of the two (writing one zeroes the other); set one", name, k.twin, ErrBadValue))
		}
	}
	if err := joinLine(errs); err != nil {
		return nil, nil, err
	}
	return set, order, nil
}

// steps checks one knob on each of its targets and reads its value
// before.
func (h *Host) steps(k *knob, set map[string]string, t *targets) ([]step, error) {
	v := set[k.name]
	switch k.scope {
	case vmSysctl:
		path := filepath.Join(h.cfg.ProcDir, "sys", "vm", k.name)
		before, err := readAttr(path)
		if err != nil {
			return nil, err
		}
		canon, err := k.check(v, checkCtx{set: set})
		if err != nil {
			return nil, err
		}
		st := step{knob: k, target: "vm", path: path, value: canon, before: before}
		if k.twin != "" {
			if st.twin, err = readAttr(filepath.Join(filepath.Dir(path), k.twin)); err != nil {
				return nil, err
			}
		}
		return []step{st}, nil
	case mountOptions:
		return h.mountStep(k, v, t)
	}
	qs, err := t.queuesFor(k.scope)
	if err != nil {
		return nil, err
	}
	var out []step
	for i, q := range qs {
		before, err := readAttr(q.attr(k.name))
		if err != nil {
			return nil, fmt.Errorf("%w on %s", err, q.name)
		}
		canon, err := k.check(v, checkCtx{q: q, set: set})
		if err != nil {
			return nil, err
		}
		out = append(out, step{knob: k, target: q.name, qidx: i, path: q.attr(k.name), value: canon, before: before})
	}
	return out, nil
}

// mountStep checks remount options with the filesystem itself.
func (h *Host) mountStep(k *knob, v string, t *targets) ([]step, error) {
	m := t.mount
	opts, unknown, err := parseMountOptions(v, m.FSType)
	if err != nil {
		return nil, err
	}
	var sb []string
	for _, o := range opts {
		if !o.vfs {
			sb = append(sb, o.value)
		}
	}
	if err := kernelParse(m.MountPoint, append(sb, unknown...)); err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%w: mount option %s: its value before cannot be read back from the mount table on %s, so it could not be restored (options: %s)",
			ErrUnavailable, strings.Join(unknown, ","), m.FSType, strings.Join(mountOptionNames(), ", "))
	}
	canon := make([]string, len(opts))
	for i, o := range opts {
		canon[i] = o.value
	}
	return []step{{knob: k, target: m.MountPoint, value: strings.Join(canon, ","), before: mountState(m, opts),
		mount: opts, ident: mountIdent(m)}}, nil
}

// journalFor lists the values to restore, in restore order: per file the
// value before (siblings the kernel resets included), for vm twins the one
// of the pair that was in force, for a mount its options before.
func (p *plan) journalFor() {
	type fileChange struct {
		c    Change
		rank int
		qidx int
	}
	var files []fileChange
	seen := map[string]bool{}
	add := func(path, before string, rank, qidx int) {
		if !seen[path] {
			seen[path] = true
			files = append(files, fileChange{c: Change{Kind: "file", Target: path, Before: before}, rank: rank, qidx: qidx})
			p.resources = append(p.resources, path)
		}
	}
	for _, s := range p.steps {
		switch s.knob.scope {
		case queueLeaves, queueTop:
			add(s.path, s.before, s.knob.rank, s.qidx)
			for _, sib := range s.knob.affects {
				path := filepath.Join(filepath.Dir(s.path), sib)
				if before, err := readAttr(path); err == nil {
					k, _ := lookup(sib)
					add(path, before, k.rank, s.qidx)
				}
			}
		case vmSysctl:
			p.vmChange(s, add)
		case mountOptions:
			p.resources = append(p.resources, "mount:"+s.ident)
		}
	}
	slices.SortStableFunc(files, func(a, b fileChange) int {
		if a.qidx != b.qidx {
			return a.qidx - b.qidx
		}
		return a.rank - b.rank
	})
	for _, f := range files {
		p.changes = append(p.changes, f.c)
	}
	for _, s := range p.steps {
		if s.knob.scope == mountOptions {
			p.changes = append(p.changes, Change{Kind: "remount", Target: s.target, Ident: s.ident, Before: s.before})
		}
	}
}

// vmChange journals a vm sysctl. A twin pair (dirty_bytes/dirty_ratio) is
// restored by writing the member that was in force: writing the other
// back as 0 would be refused (dirty_bytes has a two-page floor) or would
// not bring the first back.
func (p *plan) vmChange(s step, add func(path, before string, rank, qidx int)) {
	if s.knob.twin == "" {
		add(s.path, s.before, 1<<20, 0)
		return
	}
	twinPath := filepath.Join(filepath.Dir(s.path), s.knob.twin)
	if s.before == "0" && s.twin != "0" {
		add(twinPath, s.twin, 1<<20, 0)
		p.resources = append(p.resources, s.path)
		return
	}
	add(s.path, s.before, 1<<20, 0)
	p.resources = append(p.resources, twinPath)
}

// keyOf is the canonical text of a set, order-independent.
func keyOf(set map[string]string) string {
	kv := make([]string, 0, len(set))
	for k, v := range set {
		kv = append(kv, k+"="+v)
	}
	slices.Sort(kv)
	return strings.Join(kv, "\x00")
}

// write applies the steps in order, skipping values already in force
// (writing the scheduler in force again resets nr_requests).
func (h *Host) write(p *plan) error {
	for _, s := range p.steps {
		if s.knob.scope == mountOptions {
			if err := h.remount(s); err != nil {
				return fmt.Errorf("host knob mount=%s on %s: %w", s.value, s.target, err)
			}
			continue
		}
		if cur, err := readAttr(s.path); err == nil && cur == s.value {
			continue
		}
		if err := writeAttr(s.path, s.value); err != nil {
			return fmt.Errorf("host knob %s=%s on %s: %w", s.knob.name, s.value, s.target, err)
		}
	}
	return nil
}

func (h *Host) remount(s step) error {
	m, err := findMount(h.resolver(), s.target, s.ident)
	if err != nil {
		return err
	}
	for _, o := range s.mount {
		if classNamed(o.class).current(m) == o.value {
			continue
		}
		if err := remountOne(m.MountPoint, o); err != nil {
			return err
		}
	}
	return nil
}

// readBack reads every knob after all are written: later writes may have
// moved earlier ones, and the kernel clamps.
func (h *Host) readBack(p *plan) ([]Result, error) {
	out := make([]Result, 0, len(p.steps))
	for _, s := range p.steps {
		r := Result{Knob: s.knob.name, Target: s.target, Before: s.before, Set: s.value}
		if s.knob.scope == mountOptions {
			m, err := findMount(h.resolver(), s.target, s.ident)
			if err != nil {
				return nil, fmt.Errorf("host knob mount: read back: %w", err)
			}
			r.Read = mountState(m, s.mount)
		} else {
			v, err := readAttr(s.path)
			if err != nil {
				return nil, fmt.Errorf("host knob %s: read back: %w", s.knob.name, err)
			}
			r.Read = v
		}
		if s.knob.twin != "" && s.before == "0" && s.twin != "0" {
			r.Before = "0 (" + s.knob.twin + "=" + s.twin + ")"
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b Result) int {
		return slices.Index(p.order, a.Knob) - slices.Index(p.order, b.Knob)
	})
	return out, nil
}
