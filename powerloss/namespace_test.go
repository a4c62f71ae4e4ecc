package powerloss

import (
	"os"
	"testing"
)

// TestNamespaceNeedsDirFsync checks each metadata operation twice: without
// a directory fsync the cut undoes it; with one it survives.
func TestNamespaceNeedsDirFsync(t *testing.T) {
	tests := []struct {
		name    string
		do      func(t *testing.T, e *env)
		syncDir string
		undone  func(e *env) bool // the backing directory shows the op undone
		kept    func(e *env) bool // the backing directory shows the op done
	}{
		{"rename", func(t *testing.T, e *env) {
			must(t, os.Rename(e.path("a"), e.path("c")))
		}, ".", func(e *env) bool { return e.exists("a") && !e.exists("c") },
			func(e *env) bool { return !e.exists("a") && e.readDurable("c") == "A" }},
		{"rename over existing", func(t *testing.T, e *env) {
			must(t, os.Rename(e.path("a"), e.path("b")))
		}, ".", func(e *env) bool { return e.readDurable("a") == "A" && e.readDurable("b") == "B" },
			func(e *env) bool { return !e.exists("a") && e.readDurable("b") == "A" }},
		{"create with fsynced data", func(t *testing.T, e *env) {
			f := e.open("new", os.O_CREATE|os.O_EXCL)
			writeAt(t, f, "data", 0)
			must(t, f.Sync())
		}, ".", func(e *env) bool { return !e.exists("new") },
			func(e *env) bool { return e.readDurable("new") == "data" }},
		{"unlink", func(t *testing.T, e *env) {
			must(t, os.Remove(e.path("a")))
		}, ".", func(e *env) bool { return e.readDurable("a") == "A" },
			func(e *env) bool { return !e.exists("a") }},
		{"mkdir and file inside", func(t *testing.T, e *env) {
			must(t, os.Mkdir(e.path("d"), 0o755))
			must(t, os.WriteFile(e.path("d/x"), []byte("x"), 0o644))
			e.fsyncPath("d/x")
		}, "d", func(e *env) bool { return !e.exists("d") },
			func(e *env) bool { return e.readDurable("d/x") == "x" }},
		{"symlink", func(t *testing.T, e *env) {
			must(t, os.Symlink("a", e.path("l")))
		}, ".", func(e *env) bool { return !e.exists("l") },
			func(e *env) bool { l, _ := os.Readlink(e.durable("l")); return l == "a" }},
		{"hard link", func(t *testing.T, e *env) {
			must(t, os.Link(e.path("a"), e.path("h")))
		}, ".", func(e *env) bool { return !e.exists("h") },
			func(e *env) bool { return e.readDurable("h") == "A" }},
	}
	for _, tt := range tests {
		for _, sync := range []bool{false, true} {
			name := tt.name + map[bool]string{false: ", no dir fsync", true: ", dir fsync"}[sync]
			t.Run(name, func(t *testing.T) {
				e := mountEnv(t, map[string]string{"a": "A", "b": "B"})
				tt.do(t, e)
				if sync {
					e.fsyncPath(tt.syncDir)
				}
				e.cut(CutOptions{})
				if !sync && !tt.undone(e) {
					t.Errorf("%s without dir fsync survived the cut", tt.name)
				}
				if sync && !tt.kept(e) {
					t.Errorf("%s with dir fsync was lost", tt.name)
				}
			})
		}
	}
}

// TestDirFsyncCommitsInOrder: fsync of one directory commits the journal up
// to its last change, including earlier changes elsewhere (as a journaling
// file system does), and nothing after it.
func TestDirFsyncCommitsInOrder(t *testing.T) {
	e := mountEnv(t, map[string]string{"a": "A", "b": "B"})
	must(t, os.Mkdir(e.path("d1"), 0o755))
	must(t, os.Mkdir(e.path("d2"), 0o755))
	must(t, os.Rename(e.path("a"), e.path("d1/a")))
	must(t, os.Rename(e.path("b"), e.path("d2/b")))
	e.fsyncPath("d1")
	if s := e.stats(); s.PendingOps != 1 {
		t.Errorf("pending ops after fsync of d1 = %d; want 1 (the later rename into d2)", s.PendingOps)
	}
	e.cut(CutOptions{})
	if e.readDurable("d1/a") != "A" || e.readDurable("b") != "B" || !e.exists("d2") || e.exists("d2/b") {
		t.Errorf("after cut: want d1/a, b and an empty d2")
	}
}

// TestCleanCloseSyncsEverything: Close without a cut is a clean shutdown.
func TestCleanCloseSyncsEverything(t *testing.T) {
	e := mountEnv(t, map[string]string{"a": "A"})
	must(t, os.WriteFile(e.path("n"), []byte("new"), 0o644))
	must(t, os.Rename(e.path("a"), e.path("z")))
	must(t, e.m.Close())
	if e.readDurable("n") != "new" || e.exists("a") || e.readDurable("z") != "A" {
		t.Errorf("after clean close: want n and z, no a")
	}
}

// TestCloseAfterServerCrash: a killed server leaves its mount; Close
// removes it and the work directory, and the backing directory holds the
// durable state (here: the file without its un-synced write).
func TestCloseAfterServerCrash(t *testing.T) {
	e := mountEnv(t, map[string]string{"a": "A"})
	f := e.open("a", 0)
	writeAt(t, f, "lost", 0)
	f.Close()
	must(t, e.m.cmd.Process.Kill())
	<-e.m.exited
	if ok, _ := mountedAt(e.mnt); !ok {
		t.Fatalf("expected the dead server's mount to linger before Close")
	}
	must(t, e.m.Close()) // the cleanup checks no mount and no work dir remain
	if got := e.readDurable("a"); got != "A" {
		t.Errorf("after crash a = %q; want %q", got, "A")
	}
}
