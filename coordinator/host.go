package coordinator

import (
	"fmt"
	"strings"
	"unicode"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// A run's host settings (RunSpec.host) are kind-independent: the
// coordinator carries them in Validate and Assign, the workers check and
// apply them (package hostknob), and each worker's report of what it
// applied is stored in its PhaseWorker.host. The coordinator only bounds
// them.

// Limits of a run's host settings: the coordinator only carries them (the
// workers check them against their allow-lists), but it bounds what it
// stores and forwards.
const (
	maxHostSettings = 64
	maxHostName     = 64
	maxHostValue    = 1024
)

func checkHost(host []*writepathv1.HostSetting) error {
	if len(host) > maxHostSettings {
		return fmt.Errorf("%w: %d host settings; at most %d", ErrBadRequest, len(host), maxHostSettings)
	}
	for _, h := range host {
		if n := h.GetName(); n == "" || len(n) > maxHostName || len(h.GetValue()) > maxHostValue ||
			strings.ContainsFunc(n+h.GetValue(), unicode.IsControl) {
			return fmt.Errorf("%w: host setting %.64q: want a name of 1-%d and a value of at most %d printable bytes",
				ErrBadRequest, n, maxHostName, maxHostValue)
		}
	}
	return nil
}

// Bounds of a worker's host-knob report: a few results per setting and
// target; a report past them refuses the phase rather than be stored.
const (
	maxHostResults     = 4 * maxHostSettings
	maxHostResultField = 1024
)

// readyEvent turns a PhaseReady into the run's event, refusing a host
// report beyond the bounds (a hostile worker must not grow the record).
func readyEvent(worker string, pr *writepathv1.PhaseReady) event {
	ev := event{kind: evReady, worker: worker, phase: pr.GetPhase(), err: pr.GetError(), host: pr.GetHost()}
	if len(ev.host) > maxHostResults {
		ev.err, ev.host = fmt.Sprintf("host knob report of %d results; at most %d", len(ev.host), maxHostResults), nil
	}
	for _, h := range ev.host {
		if max(len(h.GetKnob()), len(h.GetTarget()), len(h.GetBefore()), len(h.GetSet()), len(h.GetRead())) > maxHostResultField {
			ev.err, ev.host = fmt.Sprintf("host knob report field longer than %d bytes", maxHostResultField), nil
			break
		}
	}
	return ev
}
