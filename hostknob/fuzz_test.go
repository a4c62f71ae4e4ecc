package hostknob

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/writepath/writepath/telemetry/diskstats"
)

// FuzzJournal: any journal file (it lives where jobs may write) opens to
// an error or to sets whose every change is refused unless it names a
// knob's own file or mount option; nothing panics.
func FuzzJournal(f *testing.F) {
	f.Add([]byte(`{"begin":1,"changes":[{"kind":"file","target":"/sys/class/block/sda/queue/scheduler","before":"none"}]}` + "\n"))
	f.Add([]byte(`{"begin":1,"changes":[{"kind":"file","target":"/etc/passwd","before":"x"}]}` + "\n{\"end\":1}\n"))
	f.Add([]byte(`{"begin":2,"changes":[{"kind":"remount","target":"/","ident":"0:0","before":"ro"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, JournalName), b, 0o600); err != nil {
			t.Fatal(err)
		}
		sys, proc := filepath.Join(dir, "sys"), filepath.Join(dir, "proc")
		j, err := OpenJournal(dir, map[string]Restorer{"file": fileRestorer{sys: sys, proc: proc}})
		if err != nil {
			return
		}
		defer j.Close()
		j.Pending()
		// The fake roots hold no files and nothing may be created: every
		// restore is refused or fails, and none reaches the real host.
		if err := j.Recover(); err == nil && len(j.Pending()) > 0 {
			t.Errorf("Recover succeeded and left sets open")
		}
	})
}

// FuzzSettings: knob settings and mount option lists from users parse or
// are refused with an error, never a panic.
func FuzzSettings(f *testing.F) {
	for _, s := range []string{"scheduler=none", "mount=noatime,barrier=0,commit=30", "dirty_bytes=64M", "write_cache=write through", "=x", "mount=ro"} {
		f.Add(s, "ext4")
	}
	f.Fuzz(func(t *testing.T, kv, fstype string) {
		s, err := ParseSetting(kv)
		if err != nil {
			return
		}
		if k, ok := lookup(s.Name); ok && k.check != nil && k.scope == vmSysctl {
			k.check(s.Value, checkCtx{})
		}
		if opts, _, err := parseMountOptions(s.Value, fstype); err == nil {
			mountState(diskstats.Mount{Options: "rw,noatime", SuperOptions: "rw,commit=7"}, opts)
		}
		parseBytes(s.Value)
		checkWriteCache(s.Value, checkCtx{})
	})
}
