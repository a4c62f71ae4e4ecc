package workload

import (
	"errors"
	"fmt"
	"testing"
)

func TestPhaseEnds(t *testing.T) {
	e := EndsPhase("limit expired")
	for _, tt := range []struct {
		err        error
		ends, stop bool
	}{
		{e, true, false},
		{fmt.Errorf("run: %w", e), true, false},
		{errors.New("limit expired"), false, false},
		{Stopped("worker-1: limit expired"), false, true},
	} {
		if g, s := errors.Is(tt.err, ErrEndsPhase), errors.Is(tt.err, ErrStopped); g != tt.ends || s != tt.stop {
			t.Errorf("%v: ends phase %v, stopped %v; want %v, %v", tt.err, g, s, tt.ends, tt.stop)
		}
	}
	if !errors.Is(fmt.Errorf("x: %w", e), e) || errors.Is(EndsPhase("limit expired"), e) {
		t.Error("an EndsPhase error is not its own sentinel")
	}
	if e.Error() != "limit expired" {
		t.Errorf("text %q", e.Error())
	}
}
