package worker

import (
	"errors"
	"sync"

	"github.com/writepath/writepath/hostknob"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// errNoHost refuses host knobs on a worker started without a Host.
var errNoHost = errors.New("host knobs: this worker changes none (start it with --allow-host)")

// checkHost validates a run's host settings without changing anything.
func (w *Worker) checkHost(host []*writepathv1.HostSetting) error {
	if len(host) == 0 {
		return nil
	}
	if w.cfg.Knobs == nil {
		return errNoHost
	}
	return w.cfg.Knobs.Check(hostSettings(host))
}

// applyHost sets a run's host knobs for one phase; nil when there are
// none.
func (w *Worker) applyHost(host []*writepathv1.HostSetting) (*phaseHost, error) {
	if len(host) == 0 {
		return nil, nil
	}
	if w.cfg.Knobs == nil {
		return nil, errNoHost
	}
	a, err := w.cfg.Knobs.Apply(hostSettings(host))
	if err != nil {
		return nil, err
	}
	w.cfg.Log.Info("host knobs applied", "knobs", a.Results())
	return &phaseHost{a: a}, nil
}

// phaseHost is a phase's hold on its host knobs; restore is idempotent
// and safe from any of the paths that end a phase.
type phaseHost struct {
	a    *hostknob.Applied
	once sync.Once
	err  error
}

func (h *phaseHost) restore() error {
	if h == nil {
		return nil
	}
	h.once.Do(func() { h.err = h.a.Restore() })
	return h.err
}

func (h *phaseHost) results() []*writepathv1.HostKnobResult {
	if h == nil {
		return nil
	}
	rs := h.a.Results()
	out := make([]*writepathv1.HostKnobResult, len(rs))
	for i, r := range rs {
		out[i] = &writepathv1.HostKnobResult{Knob: r.Knob, Target: r.Target, Before: r.Before, Set: r.Set, Read: r.Read}
	}
	return out
}

func hostSettings(host []*writepathv1.HostSetting) []hostknob.Setting {
	out := make([]hostknob.Setting, len(host))
	for i, h := range host {
		out[i] = hostknob.Setting{Name: h.GetName(), Value: h.GetValue()}
	}
	return out
}
