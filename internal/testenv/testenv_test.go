package testenv

import (
	"errors"
	"fmt"
	"testing"
)

// TestNeedSkipsNamingWhat: a missing need skips with its name unless
// strict, where it fails.
func TestNeedSkipsNamingWhat(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Setenv("CI", "")
		t.Setenv(AllVar, map[bool]string{true: "1", false: ""}[strict])
		ft := &fakeT{TB: t}
		func() {
			defer func() { _ = recover() }()
			Need(ft, "fio", errors.New("fio not on PATH"))
		}()
		if strict && (!ft.failed || ft.skipped) || !strict && (!ft.skipped || ft.failed) {
			t.Errorf("strict=%v: failed %v, skipped %v", strict, ft.failed, ft.skipped)
		}
		if want := "needs fio: fio not on PATH"; len(ft.msg) < len(want) || ft.msg[:len(want)] != want {
			t.Errorf("message %q; want it to start %q", ft.msg, want)
		}
	}
}

type fakeT struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed, f.msg = true, sprintf(format, args...)
	panic("fatal")
}
func (f *fakeT) Skipf(format string, args ...any) {
	f.skipped, f.msg = true, sprintf(format, args...)
	panic("skip")
}

var sprintf = fmt.Sprintf
