package fio

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/writepath/writepath/internal/testenv"
)

func TestCloneCPUs(t *testing.T) {
	tests := []struct {
		args  []string
		index int
		want  []uint32
	}{
		{[]string{"--cpus_allowed=0-3"}, 5, []uint32{0, 1, 2, 3}},
		{[]string{"--cpus_allowed=0-3", "--cpus_allowed_policy=split"}, 5, []uint32{1}},
		{[]string{"--cpus_allowed=6,2,4", "--cpus_allowed_policy=split"}, 0, []uint32{2}}, // ascending, as fio's mask
		{[]string{"--cpumask=0x5"}, 0, []uint32{0, 2}},
		{[]string{"--cpumask=10", "--cpus_allowed_policy=split"}, 3, []uint32{3}}, // 10 = CPUs 1 and 3
		{[]string{"--cpus_allowed_policy=split"}, 3, nil},
	}
	for _, tt := range tests {
		spec, err := ParseArgs(append([]string{"--name=a", "--size=1m"}, tt.args...))
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if got := cloneCPUs(spec.Jobs[0], tt.index); !slices.Equal(got, tt.want) {
			t.Errorf("%q clone %d: CPUs %v; want %v", tt.args, tt.index, got, tt.want)
		}
	}
	if _, err := ParseArgs([]string{"--name=a", "--size=1m", "--cpus_allowed_policy=spread"}); err == nil {
		t.Error("cpus_allowed_policy=spread accepted; fio refuses it")
	}
}

// restricted counts the affinity lists of pid's threads that are not
// the whole machine's (the job threads fio or writepath placed).
func restricted(t *testing.T, pid int, all string) map[string]int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	got := map[string]int{}
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok && strings.TrimSpace(v) != all {
				got[strings.TrimSpace(v)]++
			}
		}
	}
	return got
}

// TestCPUsPolicyMatchesFio runs three clones with cpus_allowed_policy=
// split and a cpumask shared by three, on fio 3.33 (threads) and here,
// and compares the CPU lists their threads run with, read from /proc
// while they run.
func TestCPUsPolicyMatchesFio(t *testing.T) {
	fio := testenv.Fio(t)
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() < 2 || !set.IsSet(0) || !set.IsSet(1) {
		t.Skipf("needs CPUs 0 and 1 (affinity %v, %v)", set, err)
	}
	all := strings.TrimSpace(string(must(exec.Command("sh", "-c", "grep Cpus_allowed_list /proc/self/status | cut -f2").Output())))
	for _, opts := range [][]string{
		{"--cpus_allowed=0-1", "--cpus_allowed_policy=split"},
		{"--cpumask=2"},
	} {
		args := append([]string{"--name=c", "--ioengine=null", "--size=1g", "--numjobs=3", "--thread", "--time_based", "--runtime=3",
			"--directory=" + t.TempDir()}, opts...)
		cmd := exec.Command(fio, append(args, "--output=/dev/null")...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		theirs := restricted(t, cmd.Process.Pid, all)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("fio %q: %v", opts, err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := runOursQuiet(args...)
			done <- err
		}()
		time.Sleep(1500 * time.Millisecond)
		ours := restricted(t, os.Getpid(), all)
		if err := <-done; err != nil {
			t.Fatalf("writepath %q: %v", opts, err)
		}
		// No thread stays pinned once the run is over: the runtime may
		// start one from a clone's thread as it exits, inheriting its CPUs.
		if left := restricted(t, os.Getpid(), all); len(left) > 0 {
			t.Errorf("%q: after the run, threads of this process still run on %v only", opts, left)
		}
		t.Logf("%q: fio threads on %v, writepath's on %v", opts, theirs, ours)
		if !maps.Equal(ours, theirs) {
			t.Errorf("%q: writepath's job threads run on %v; fio's on %v", opts, ours, theirs)
		}
	}
}

func runOursQuiet(args ...string) ([]byte, error) {
	var out, errb strings.Builder
	err := RunCommand(context.Background(), append(args, "--output=/dev/null"), &out, &errb, "test")
	return []byte(out.String()), err
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
