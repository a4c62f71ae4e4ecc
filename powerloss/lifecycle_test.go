package powerloss

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// waitExit waits for the server process to be reaped.
func waitExit(t *testing.T, m *Mounted) {
	t.Helper()
	select {
	case <-m.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("server did not exit")
	}
}

// TestLeaseLost: when the client goes away without a word (it crashed),
// the server syncs, unmounts and exits by itself.
func TestLeaseLost(t *testing.T) {
	e := mountEnv(t, map[string]string{})
	must(t, os.WriteFile(e.path("f"), []byte("kept"), 0o644))
	e.m.mu.Lock()
	e.m.mu.conn.Close()
	e.m.mu.Unlock()
	waitExit(t, e.m)
	if ok, _ := mountedAt(e.mnt); ok {
		t.Errorf("mount still there after the client hung up")
	}
	if got := e.readDurable("f"); got != "kept" {
		t.Errorf("f = %q; want a clean shutdown to have synced it", got)
	}
}

// TestServerSignal: SIGTERM or SIGINT to the server is a clean shutdown.
func TestServerSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		e := mountEnv(t, map[string]string{})
		must(t, os.WriteFile(e.path("f"), []byte("x"), 0o644))
		must(t, e.m.cmd.Process.Signal(sig))
		waitExit(t, e.m)
		if ok, _ := mountedAt(e.mnt); ok {
			t.Errorf("%v: mount still there", sig)
		}
		if !e.exists("f") {
			t.Errorf("%v: f not synced by the shutdown", sig)
		}
	}
}

// TestConcurrentWritersCut: writers on separate files, half of them
// fsyncing, racing one another; after the cut exactly the synced files
// hold their data. Run under -race to check the locking.
func TestConcurrentWritersCut(t *testing.T) {
	const writers = 8
	files := map[string]string{}
	for i := range writers {
		files[fmt.Sprint("f", i)] = ""
	}
	e := mountEnv(t, files)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			f, err := os.OpenFile(e.path(fmt.Sprint("f", i)), os.O_RDWR, 0)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			for k := range 50 {
				f.WriteAt([]byte(fmt.Sprintf("%04d", k)), int64(4*k))
			}
			if i%2 == 0 {
				f.Sync()
			}
		})
	}
	wg.Wait()
	e.cut(CutOptions{})
	for i := range writers {
		got, want := len(e.readDurable(fmt.Sprint("f", i))), 0
		if i%2 == 0 {
			want = 200
		}
		if got != want {
			t.Errorf("f%d: %d durable bytes; want %d", i, got, want)
		}
	}
}

// TestMountErrors: a bad layout fails fast with the server's reason, and
// leaves nothing behind.
func TestMountErrors(t *testing.T) {
	dir := t.TempDir()
	backing := dir + "/backing"
	must(t, os.Mkdir(backing, 0o755))
	must(t, os.Mkdir(backing+"/mnt", 0o755))
	tests := []struct {
		name, backing, mnt, want string
	}{
		{"missing backing", dir + "/nope", backing + "/mnt", "--backing"},
		{"mount inside backing", backing, backing + "/mnt", "inside"},
	}
	exe, err := os.Executable()
	must(t, err)
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		m, err := MountConfig(ctx, Config{Exe: exe, Env: serverEnv, Backing: tt.backing, Mountpoint: tt.mnt})
		cancel()
		if err == nil {
			m.Close()
			t.Errorf("%s: Mount succeeded", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q does not mention %q", tt.name, err, tt.want)
		}
		if ok, _ := mountedAt(tt.mnt); ok {
			t.Errorf("%s: mount left behind", tt.name)
		}
	}
}
