package powerloss

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// open opens name in the mount; the cut closes it first, as the harness
// kills the server before cutting.
func (e *env) open(name string, flags int) *os.File {
	e.t.Helper()
	f, err := os.OpenFile(e.path(name), os.O_RDWR|flags, 0o644)
	must(e.t, err)
	e.files = append(e.files, f)
	return f
}

func writeAt(t *testing.T, f *os.File, s string, off int64) {
	t.Helper()
	if _, err := f.WriteAt([]byte(s), off); err != nil {
		t.Fatal(err)
	}
}

func TestWriteFsyncWriteCut(t *testing.T) {
	e := mountEnv(t, map[string]string{"f": ""})
	f := e.open("f", 0)
	writeAt(t, f, "first", 0)
	must(t, f.Sync())
	writeAt(t, f, "SECOND-and-longer", 0)
	want := []FileDirty{{Path: "f", DirtyBytes: 17, Writes: 1}}
	if s := e.stats(); s.DirtyBytes != 17 || s.Fsyncs != 1 || !reflect.DeepEqual(s.Dirty, want) {
		t.Errorf("stats before cut = %+v; want 17 dirty bytes in one write to f, 1 fsync", s)
	}
	rep := e.cut(CutOptions{})
	if got := e.readDurable("f"); got != "first" {
		t.Errorf("after cut f = %q; want %q", got, "first")
	}
	if rep.DroppedBytes != 17 || len(rep.Files) != 1 || rep.Files[0].Path != "f" {
		t.Errorf("cut report = %+v; want 17 dropped bytes in f", rep)
	}
}

func TestUnsyncedWriteDropped(t *testing.T) {
	e := mountEnv(t, map[string]string{"f": "old"})
	f := e.open("f", 0)
	writeAt(t, f, "new data", 0)
	must(t, f.Close())
	e.cut(CutOptions{})
	if got := e.readDurable("f"); got != "old" {
		t.Errorf("after cut f = %q; want %q (close is not a sync)", got, "old")
	}
}

func TestODSyncWriteSurvives(t *testing.T) {
	for _, flag := range []int{unix.O_DSYNC, unix.O_SYNC} {
		e := mountEnv(t, map[string]string{"f": ""})
		f := e.open("f", flag)
		writeAt(t, f, "synced", 0)
		e.cut(CutOptions{})
		if got := e.readDurable("f"); got != "synced" {
			t.Errorf("open flag %#x: after cut f = %q; want %q", flag, got, "synced")
		}
	}
}

func TestReadsSeeCachedData(t *testing.T) {
	e := mountEnv(t, map[string]string{"f": "0123456789"})
	f := e.open("f", 0)
	writeAt(t, f, "abc", 4)
	writeAt(t, f, "XYZ", 12) // past EOF: a zero byte between
	got, err := os.ReadFile(e.path("f"))
	must(t, err)
	if want := "0123abc789\x00\x00XYZ"; string(got) != want {
		t.Errorf("read through mount = %q; want %q", got, want)
	}
	if st, _ := os.Stat(e.path("f")); st.Size() != 15 {
		t.Errorf("size through mount = %d; want 15", st.Size())
	}
	if d := e.readDurable("f"); d != "0123456789" {
		t.Errorf("backing = %q before any fsync; want it untouched", d)
	}
}

func TestTruncate(t *testing.T) {
	old := strings.Repeat("x", 8192)
	tests := []struct {
		name  string
		do    func(t *testing.T, e *env)
		logic string // content through the mount
		after string // backing after the cut
	}{
		{"shrink, no fsync", func(t *testing.T, e *env) {
			must(t, os.Truncate(e.path("f"), 100))
		}, old[:100], old},
		{"shrink, fsync", func(t *testing.T, e *env) {
			must(t, os.Truncate(e.path("f"), 100))
			e.fsyncPath("f")
		}, old[:100], old[:100]},
		{"shrink then grow reads zeros, fsync", func(t *testing.T, e *env) {
			must(t, os.Truncate(e.path("f"), 10))
			must(t, os.Truncate(e.path("f"), 20))
			e.fsyncPath("f")
		}, old[:10] + strings.Repeat("\x00", 10), old[:10] + strings.Repeat("\x00", 10)},
		{"O_TRUNC open, no fsync", func(t *testing.T, e *env) {
			f := e.open("f", os.O_TRUNC)
			writeAt(t, f, "new", 0)
		}, "new", old},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mountEnv(t, map[string]string{"f": old})
			tt.do(t, e)
			got, err := os.ReadFile(e.path("f"))
			must(t, err)
			if string(got) != tt.logic {
				t.Errorf("through mount: %d bytes; want %d", len(got), len(tt.logic))
			}
			e.cut(CutOptions{})
			if d := e.readDurable("f"); d != tt.after {
				t.Errorf("after cut: %d bytes %.12q...; want %d bytes", len(d), d, len(tt.after))
			}
		})
	}
}

func TestFallocate(t *testing.T) {
	for _, sync := range []bool{false, true} {
		e := mountEnv(t, map[string]string{"f": ""})
		f := e.open("f", 0)
		must(t, unix.Fallocate(int(f.Fd()), 0, 0, 1<<20)) // posix_fallocate
		if st, _ := f.Stat(); st.Size() != 1<<20 {
			t.Errorf("size after fallocate = %d; want %d", st.Size(), 1<<20)
		}
		if sync {
			must(t, f.Sync())
		}
		e.cut(CutOptions{})
		want := int64(0)
		if sync {
			want = 1 << 20
		}
		st, err := os.Stat(e.durable("f"))
		must(t, err)
		if st.Size() != want {
			t.Errorf("fsync=%v: durable size = %d; want %d", sync, st.Size(), want)
		}
	}
}
