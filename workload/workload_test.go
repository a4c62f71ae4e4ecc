package workload

import (
	"context"
	"testing"
)

type nop struct{}

func (nop) Run(context.Context, string, Env, *Recorder) error { return nil }

func TestRegisterLookup(t *testing.T) {
	m := Meta{Name: "test-nop", Kind: "type.googleapis.com/writepath.test.v1.Nop",
		Phases: []Phase{{Name: "run", Placement: All, Measured: true}},
		New:    func([]byte) (Workload, error) { return nop{}, nil }}
	Register(m)
	if got, ok := Lookup(m.Kind); !ok || got.Name != m.Name {
		t.Errorf("Lookup(%q) = %v, %v", m.Kind, got.Name, ok)
	}
	if got, ok := ByName("test-nop"); !ok || got.Kind != m.Kind {
		t.Errorf("ByName(test-nop) = %v, %v", got.Kind, ok)
	}
	if p, ok := m.Phase("run"); !ok || p.Placement != All {
		t.Errorf("Phase(run) = %+v, %v", p, ok)
	}
	defer func() {
		if recover() == nil {
			t.Error("second Register of the same kind did not panic")
		}
	}()
	Register(m)
}
