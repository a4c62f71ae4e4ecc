package coordinator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/writepath/writepath/internal/echo"
	"github.com/writepath/writepath/labels"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// minInterval is the shortest reporting period accepted.
const minInterval = 10 * time.Millisecond

// Submit checks a run spec against the connected workers, asks every
// selected worker to validate the spec, and starts the run. Every problem
// that can be known before anything starts fails here: unknown kind or
// phase, no matching idle worker, a worker refusing the spec.
func (c *Coordinator) Submit(ctx context.Context, spec *writepathv1.RunSpec) (*writepathv1.Run, error) {
	if err := checkSpec(spec); err != nil {
		return nil, err
	}
	rec, picked, err := c.place(spec)
	if err != nil {
		return nil, err
	}
	if err := c.validateOn(ctx, picked, spec); err != nil {
		c.release(picked, rec.GetId())
		return nil, err
	}
	d := rec.GetInterval().AsDuration()
	r := newRun(c, rec, names(picked), d)
	r.update(func(rec *writepathv1.Run) { rec.State = writepathv1.RunState_RUN_STATE_PLACING })
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		c.release(picked, rec.GetId())
		return nil, ErrClosed
	}
	c.mu.runs[r.id] = r
	c.mu.Unlock()
	c.goOwned(r.execute)
	c.cfg.Log.Info("run submitted", "run", r.id, "kind", rec.GetKindName(), "workers", r.workers)
	return r.record(), nil
}

func checkSpec(spec *writepathv1.RunSpec) error {
	if spec.GetSpec().GetTypeUrl() == "" {
		return fmt.Errorf("%w: no workload spec", ErrBadRequest)
	}
	if d := spec.GetInterval(); d != nil && (d.CheckValid() != nil || d.AsDuration() < minInterval) {
		return fmt.Errorf("%w: interval %v is below %v", ErrBadRequest, d.AsDuration(), minInterval)
	}
	if err := labels.Check("selector", spec.GetSelector()); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if n := len(spec.GetPhases()); n > maxPhases {
		return fmt.Errorf("%w: %d phases named, the limit is %d", ErrBadRequest, n, maxPhases)
	}
	return checkHost(spec.GetHost())
}

// place picks the workers and builds the run record, reserving the
// workers for it under the lock so two submits never share a worker.
func (c *Coordinator) place(spec *writepathv1.RunSpec) (*writepathv1.Run, []*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, nil, ErrClosed
	}
	kindURL := spec.GetSpec().GetTypeUrl()
	kind, all := c.kindLocked(kindURL)
	if kind == nil {
		return nil, nil, fmt.Errorf("%w: no connected worker runs %s (connected: %s)",
			ErrUnknownKind, echo.Quote(kindURL), strings.Join(all, ", "))
	}
	phases, err := pickPhases(kind, spec.GetPhases())
	if err != nil {
		return nil, nil, err
	}
	picked, err := c.selectLocked(spec, kindURL)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	d := c.cfg.Interval
	if spec.GetInterval() != nil {
		d = spec.GetInterval().AsDuration()
	}
	rec := &writepathv1.Run{Id: c.newRunIDLocked(now), Spec: proto.Clone(spec).(*writepathv1.RunSpec),
		KindName: kind.GetName(), State: writepathv1.RunState_RUN_STATE_SUBMITTED,
		Created: timestamppb.New(now), Interval: durationpb.New(d), Phases: phases}
	for _, s := range picked {
		s.setRunID(rec.Id)
		rec.Workers = append(rec.Workers, &writepathv1.RunWorker{Name: s.name, Host: s.hello.GetHost(), Labels: s.hello.GetLabels()})
	}
	return rec, picked, nil
}

// kindLocked finds a kind among the connected workers; when none runs it,
// it returns the names of the kinds that are there, for the message.
func (c *Coordinator) kindLocked(url string) (*writepathv1.KindInfo, []string) {
	seen := map[string]bool{}
	for _, s := range c.mu.sessions {
		if k, ok := s.supports(url); ok {
			return k, nil
		}
		for _, k := range s.hello.GetKinds() {
			seen[k.GetName()] = true
		}
	}
	return nil, keys(seen)
}

// pickPhases resolves the requested phase names (none: every phase that
// does not run only on request).
func pickPhases(kind *writepathv1.KindInfo, want []string) ([]*writepathv1.PhaseRecord, error) {
	if len(want) == 0 {
		for _, p := range kind.GetPhases() {
			if !p.GetOnRequest() {
				want = append(want, p.GetName())
			}
		}
	}
	var out []*writepathv1.PhaseRecord
	for _, name := range want {
		p := findPhase(kind, name)
		if p == nil {
			return nil, fmt.Errorf("%w: kind %s has no phase %s (phases: %s)", ErrBadRequest,
				kind.GetName(), echo.Quote(name), strings.Join(phaseNames(kind), ", "))
		}
		out = append(out, &writepathv1.PhaseRecord{Name: name, Placement: p.GetPlacement(),
			Measured: p.GetMeasured(), State: writepathv1.PhaseState_PHASE_STATE_PENDING})
	}
	return out, nil
}

func findPhase(kind *writepathv1.KindInfo, name string) *writepathv1.PhaseInfo {
	for _, p := range kind.GetPhases() {
		if p.GetName() == name {
			return p
		}
	}
	return nil
}

func phaseNames(kind *writepathv1.KindInfo) []string {
	var out []string
	for _, p := range kind.GetPhases() {
		out = append(out, p.GetName())
	}
	return out
}

// selectLocked picks idle workers that match the selector and run the kind,
// in name order, as many as asked.
func (c *Coordinator) selectLocked(spec *writepathv1.RunSpec, kind string) ([]*session, error) {
	var match []*session
	var busy, noKind []string
	for _, s := range c.mu.sessions {
		if !s.matches(spec.GetSelector()) {
			continue
		}
		if _, ok := s.supports(kind); !ok {
			noKind = append(noKind, s.name)
			continue
		}
		if id := s.runID(); id != "" {
			busy = append(busy, s.name+" (run "+id+")")
			continue
		}
		match = append(match, s)
	}
	sort.Slice(match, func(i, j int) bool { return match[i].name < match[j].name })
	want := int(spec.GetWorkers())
	if len(match) == 0 || len(match) < want {
		return nil, fmt.Errorf("%w: want %d, have %d idle of %d connected matching %s (busy: %s; without the kind: %s)",
			ErrNoWorkers, max(want, 1), len(match), len(c.mu.sessions), selectorText(spec.GetSelector()),
			listOrNone(busy), listOrNone(noKind))
	}
	if want > 0 {
		match = match[:want]
	}
	return match, nil
}

// release frees workers reserved for a run that did not start.
func (c *Coordinator) release(picked []*session, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range picked {
		if s.runID() == id {
			s.setRunID("")
		}
	}
}

func names(ss []*session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.name
	}
	return out
}

func selectorText(sel map[string]string) string {
	if len(sel) == 0 {
		return "any selector"
	}
	var kv []string
	for k, v := range sel {
		kv = append(kv, echo.Clip(k)+"="+echo.Clip(v))
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}
