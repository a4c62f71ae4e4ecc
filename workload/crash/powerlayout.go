package crash

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/writepath/writepath/mysqld"
)

// mountDir is one directory the server writes that the power-loss layer
// serves: backing holds the durable state, mountpoint is what the server
// is pointed at while the power is on.
type mountDir struct {
	role       string // "data", or the setting that named the directory
	backing    string
	mountpoint string
}

// powerLayout is what a power-loss round mounts and the settings that
// point the server at the mounts. The socket, pid file and error log stay
// in the instance directory, outside every mount: they are not data, and
// the error log must outlive the cut.
type powerLayout struct {
	mounts    []mountDir
	overrides []mysqld.Setting // appended to the cell's settings (later wins)
}

// dirKeys are the settings that can put InnoDB files outside the datadir
// (redo, undo, system tablespace, MySQL 8's doublewrite files).
var dirKeys = []string{"innodb_log_group_home_dir", "innodb_undo_directory",
	"innodb_data_home_dir", "innodb_doublewrite_dir"}

// newPowerLayout mounts the datadir at instDir/powerloss-data and every
// directory of dirKeys that lies outside it at instDir/powerloss-<key>.
// Relative values are resolved by the server inside its datadir (it
// chdirs there), so they follow the datadir's mount unchanged; absolute
// values inside the datadir are rewritten to the same place in its mount.
func newPowerLayout(instDir, datadir string, settings []mysqld.Setting) (powerLayout, error) {
	data := mountDir{role: "data", backing: filepath.Clean(datadir), mountpoint: filepath.Join(instDir, "powerloss-data")}
	l := powerLayout{mounts: []mountDir{data}, overrides: []mysqld.Setting{{Key: "datadir", Value: data.mountpoint}}}
	for _, key := range dirKeys {
		v, ok := lastSetting(settings, key)
		if !ok || !filepath.IsAbs(v) {
			continue
		}
		if err := l.add(instDir, key, filepath.Clean(v)); err != nil {
			return l, err
		}
	}
	return l, nil
}

func (l *powerLayout) add(instDir, key, dir string) error {
	for _, m := range l.mounts {
		if rel, ok := under(dir, m.backing); ok {
			l.overrides = append(l.overrides, mysqld.Setting{Key: key, Value: filepath.Join(m.mountpoint, rel)})
			return nil
		}
		if _, ok := under(m.backing, dir); ok {
			return fmt.Errorf("--power-loss: %s=%s contains %s; give each InnoDB directory its own place", key, dir, m.backing)
		}
	}
	m := mountDir{role: key, backing: dir, mountpoint: filepath.Join(instDir, "powerloss-"+strings.TrimPrefix(key, "innodb_"))}
	l.mounts = append(l.mounts, m)
	l.overrides = append(l.overrides, mysqld.Setting{Key: key, Value: m.mountpoint})
	return nil
}

// under reports whether p is dir or inside it, and p relative to dir.
func under(p, dir string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

// lastSetting is the value of key in settings (the last one wins, dashes
// and underscores alike, as the server reads my.cnf).
func lastSetting(settings []mysqld.Setting, key string) (string, bool) {
	v, ok := "", false
	for _, s := range settings {
		if strings.ReplaceAll(strings.ToLower(s.Key), "-", "_") == key {
			v, ok = s.Value, true
		}
	}
	return v, ok && v != ""
}
