package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// testCommands join the command table in child processes of these tests.
func testCommands() []*cobra.Command {
	return []*cobra.Command{{
		Use:    "test-ignore-context",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			for { // a command stuck in work that never looks at its context
				time.Sleep(10 * time.Millisecond)
			}
		},
	}}
}

// lockedBuffer collects a child's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSignalsStopEveryCommand starts representative commands as real
// processes, sends SIGTERM (or SIGINT) once each is at work, and checks it
// has exited within a second: a local fio job, an embedded run, a
// coordinator, a worker retrying, an embedded campaign, a CLI call to a
// coordinator that never answers, and a command that ignores its context
// (ended by the watchdog).
func TestSignalsStopEveryCommand(t *testing.T) {
	dir := t.TempDir()
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	spec := filepath.Join(dir, "c.yaml")
	os.WriteFile(spec, []byte("name: sig\nworkload: fio\noptions: [--name=c, --rw=randwrite, --bs=4k, --size=4M, --runtime=60, --time_based, --ioengine=psync]\n"+
		"matrix:\n  --fsync: [0, 1]\nrounds: 2\n"), 0o600)
	fio := []string{"--name=s", "--rw=randwrite", "--bs=4k", "--size=8M", "--runtime=60", "--time_based", "--ioengine=psync"}
	tests := []struct {
		name string
		sig  syscall.Signal
		args []string
		// want is the exit status, -1 for any: a command that stops on its
		// own exits 0 or 1, one the watchdog ends 128+signal (a loaded
		// machine can push a worker still loading its eBPF programs there).
		want int
		// ready, when set, is printed once the command is at work: a
		// loaded machine can take longer than the fixed wait to get a
		// -race child there (a signal before main installs its handler
		// kills it, which is not what is tested).
		ready string
	}{
		{"fio", syscall.SIGTERM, append([]string{"fio", "--directory=" + dir}, fio...), -1, ""},
		{"run embedded", syscall.SIGINT, append([]string{"run", "fio", "--local-workers", "2", "--db", filepath.Join(dir, "r.db"), "--data-dir", dir}, fio...), -1, ""},
		{"coordinator", syscall.SIGTERM, []string{"coordinator", "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "c.db")}, -1, "coordinator serving"},
		{"worker retrying", syscall.SIGTERM, []string{"worker", "--coordinator", "127.0.0.1:1", "--name", "w", "--data-dir", dir}, -1, "reconnecting"},
		{"campaign embedded", syscall.SIGTERM, []string{"campaign", "run", spec, "--db", filepath.Join(dir, "k.db"), "--data-dir", dir}, -1, ""},
		{"runs list, silent coordinator", syscall.SIGTERM, []string{"runs", "list", "--coordinator", silent.Addr().String()}, -1, ""},
		{"ignores its context", syscall.SIGTERM, []string{"test-ignore-context"}, 128 + int(syscall.SIGTERM), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out lockedBuffer
			c := exec.Command(os.Args[0])
			c.Env = append(os.Environ(), cliChildEnv+"="+strings.Join(tt.args, "\x1f"))
			c.Dir = dir
			c.Stdout, c.Stderr = &out, &out
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- c.Wait() }()
			select {
			case err := <-exited:
				t.Fatalf("ended before the signal: %v: %s", err, out.String())
			case <-time.After(1500 * time.Millisecond): // at work
			}
			for deadline := time.Now().Add(30 * time.Second); tt.ready != "" && !strings.Contains(out.String(), tt.ready); {
				if time.Now().After(deadline) {
					c.Process.Kill()
					t.Fatalf("never printed %q: %s", tt.ready, out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			// The promise is a second; a -race binary is several times
			// slower at everything, its exit included.
			limit := time.Second
			if raceDetector {
				limit = 3 * time.Second
			}
			sent := time.Now()
			c.Process.Signal(tt.sig)
			select {
			case <-exited:
			case <-time.After(limit):
				c.Process.Kill()
				<-exited
				t.Fatalf("still running %v after %v: %s", limit, tt.sig, out.String())
			}
			took := time.Since(sent)
			code := c.ProcessState.ExitCode()
			t.Logf("%v: exit %d after %v", tt.sig, code, took.Round(time.Millisecond))
			if tt.want >= 0 && code != tt.want {
				t.Errorf("exit status %d; want %d: %s", code, tt.want, out.String())
			}
			if code < 0 {
				t.Errorf("killed by the signal instead of handling it: %s", out.String())
			}
		})
	}
}

// TestRunsListDamagedStore: `writepath runs list --db` on a truncated
// store says so in one line naming the file, and exits 1.
func TestRunsListDamagedStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "wp.db")
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), cliChildEnv+"="+strings.Join([]string{"run", "fio", "--local-workers", "1", "--db", db, "--data-dir", dir,
		"--name=d", "--rw=randwrite", "--bs=4k", "--size=1M", "--ioengine=psync"}, "\x1f"))
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("run: %v: %s", err, out)
	}
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	// bbolt grows the file ahead of its use, so half the file may hold
	// every page in use; cutting before the last page written always loses
	// one (pages past the high-water mark were never written: zeros).
	page := os.Getpagesize()
	last := len(b)/page - 1
	for last > 3 && bytes.Count(b[last*page:(last+1)*page], []byte{0}) == page {
		last--
	}
	for _, cut := range []int{last * page, 3 * page} {
		os.WriteFile(db, b[:cut], 0o600)
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), cliChildEnv+"=runs\x1flist\x1f--db\x1f"+db)
		out, _ := c.CombinedOutput()
		msg := strings.TrimSpace(string(out))
		if c.ProcessState.ExitCode() != 1 || strings.Count(msg, "\n") > 0 || !strings.Contains(msg, db) || strings.Contains(msg, "panic") {
			t.Errorf("runs list on a store cut to %d bytes: exit %d, %q; want exit 1 and one line naming %s", cut, c.ProcessState.ExitCode(), msg, db)
		} else {
			t.Log(msg)
		}
	}
}
