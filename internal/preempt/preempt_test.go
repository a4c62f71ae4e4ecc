package preempt

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain doubles as the program under test: with PREEMPT_TEST_CHILD set
// it calls Off and prints the GODEBUG it ends up running with.
func TestMain(m *testing.M) {
	if os.Getenv("PREEMPT_TEST_CHILD") != "" {
		Off()
		os.Stdout.WriteString(os.Getenv("GODEBUG") + "\n")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestOffReexecutesWithTheSetting(t *testing.T) {
	tests := []struct {
		name, godebug, want string
	}{
		{"unset", "", "asyncpreemptoff=1"},
		{"other settings kept", "gctrace=0", "gctrace=0,asyncpreemptoff=1"},
		{"user's choice kept", "asyncpreemptoff=0", "asyncpreemptoff=0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(withGODEBUG(os.Environ(), tt.godebug), "PREEMPT_TEST_CHILD=1")
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(out)); got != tt.want {
				t.Errorf("GODEBUG after Off = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestWithGODEBUGLeavesOneEntry(t *testing.T) {
	got := withGODEBUG([]string{"A=1", "GODEBUG=", "B=2", "GODEBUG=x=1"}, "asyncpreemptoff=1")
	want := []string{"A=1", "B=2", "GODEBUG=asyncpreemptoff=1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("withGODEBUG = %q; want %q", got, want)
	}
}
