package coordinator

import (
	"fmt"
	"testing"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestPickPhasesSkipsOnRequest: a run that names no phase runs every
// phase of the kind in order except those that run only on request;
// naming one runs it.
func TestPickPhasesSkipsOnRequest(t *testing.T) {
	kind := &writepathv1.KindInfo{Name: "oltp", Phases: []*writepathv1.PhaseInfo{
		{Name: "prepare"}, {Name: "prewarm", OnRequest: true}, {Name: "run", Measured: true}, {Name: "cleanup"}}}
	names := func(want []string) string {
		got, err := pickPhases(kind, want)
		if err != nil {
			return err.Error()
		}
		var out []string
		for _, p := range got {
			out = append(out, p.GetName())
		}
		return fmt.Sprint(out)
	}
	if got := names(nil); got != "[prepare run cleanup]" {
		t.Errorf("pickPhases(none) = %s; want [prepare run cleanup]", got)
	}
	if got := names([]string{"prewarm", "run"}); got != "[prewarm run]" {
		t.Errorf("pickPhases(prewarm run) = %s; want [prewarm run]", got)
	}
}
