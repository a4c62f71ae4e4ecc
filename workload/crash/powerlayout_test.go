package crash

import (
	"reflect"
	"strings"
	"testing"

	"github.com/writepath/writepath/mysqld"
)

func TestPowerLayout(t *testing.T) {
	const inst, data = "/i", "/i/data"
	dataMount := mountDir{"data", data, "/i/powerloss-data"}
	datadir := mysqld.Setting{Key: "datadir", Value: "/i/powerloss-data"}
	tests := []struct {
		name      string
		settings  []mysqld.Setting
		mounts    []mountDir
		overrides []mysqld.Setting
	}{
		{"datadir only", nil, []mountDir{dataMount}, []mysqld.Setting{datadir}},
		{"relative redo dir follows the datadir",
			[]mysqld.Setting{{Key: "innodb_log_group_home_dir", Value: "./redo"}},
			[]mountDir{dataMount}, []mysqld.Setting{datadir}},
		{"absolute redo dir inside the datadir is rewritten",
			[]mysqld.Setting{{Key: "innodb-log-group-home-dir", Value: "/i/data/redo"}},
			[]mountDir{dataMount}, []mysqld.Setting{datadir, {Key: "innodb_log_group_home_dir", Value: "/i/powerloss-data/redo"}}},
		{"separate redo and undo dirs get their own mounts, the last value wins",
			[]mysqld.Setting{{Key: "innodb_log_group_home_dir", Value: "/x"}, {Key: "innodb_log_group_home_dir", Value: "/redo"},
				{Key: "innodb_undo_directory", Value: "/undo/"}},
			[]mountDir{dataMount, {"innodb_log_group_home_dir", "/redo", "/i/powerloss-log_group_home_dir"},
				{"innodb_undo_directory", "/undo", "/i/powerloss-undo_directory"}},
			[]mysqld.Setting{datadir, {Key: "innodb_log_group_home_dir", Value: "/i/powerloss-log_group_home_dir"},
				{Key: "innodb_undo_directory", Value: "/i/powerloss-undo_directory"}}},
		{"two settings naming one dir share its mount",
			[]mysqld.Setting{{Key: "innodb_log_group_home_dir", Value: "/ssd"}, {Key: "innodb_doublewrite_dir", Value: "/ssd/dblwr"}},
			[]mountDir{dataMount, {"innodb_log_group_home_dir", "/ssd", "/i/powerloss-log_group_home_dir"}},
			[]mysqld.Setting{datadir, {Key: "innodb_log_group_home_dir", Value: "/i/powerloss-log_group_home_dir"},
				{Key: "innodb_doublewrite_dir", Value: "/i/powerloss-log_group_home_dir/dblwr"}}},
	}
	for _, tt := range tests {
		l, err := newPowerLayout(inst, data, tt.settings)
		if err != nil {
			t.Errorf("%s: newPowerLayout(%v) = %v", tt.name, tt.settings, err)
			continue
		}
		if !reflect.DeepEqual(l.mounts, tt.mounts) || !reflect.DeepEqual(l.overrides, tt.overrides) {
			t.Errorf("%s: newPowerLayout(%v) = %+v, %+v; want %+v, %+v", tt.name, tt.settings, l.mounts, l.overrides, tt.mounts, tt.overrides)
		}
	}
	if _, err := newPowerLayout(inst, data, []mysqld.Setting{{Key: "innodb_undo_directory", Value: "/i"}}); err == nil {
		t.Errorf("newPowerLayout with the undo dir containing the datadir = nil error; want one")
	}
}

func TestFileClass(t *testing.T) {
	for path, want := range map[string]string{
		"ib_logfile0": classRedo, "sbtest/sbtest1.ibd": classData, "ibdata1": classSystem, "undo001": classData,
		"#innodb_redo/#ib_redo10": classRedo, "aria_log.00000001": classOther, "ib_buffer_pool": classOther,
	} {
		if got := fileClass(path); got != want {
			t.Errorf("fileClass(%q) = %s; want %s", path, got, want)
		}
	}
}

func TestScanVerdict(t *testing.T) {
	var v Verdict
	scanVerdict(&v, []string{
		"2026-11-30 11:06:07 0 [ERROR] InnoDB: Unable to apply log to corrupted page 6 in file ./ibdata1",
		"2026-11-30 11:04:28 0 [Note] InnoDB: Trying to recover page [page id: space=0, page number=262] from the doublewrite buffer.",
		"2026-11-30 11:06:07 0 [ERROR] Aborting",
	})
	if v.CorruptLines != 1 || v.DoublewriteLines != 1 || v.ErrorLines != 2 || !v.Damaged() {
		t.Errorf("scanVerdict = %+v; want 1 corrupt, 1 doublewrite, 2 error lines, damaged", v)
	}
	if (Verdict{}).Damaged() {
		t.Errorf("an empty verdict is damaged")
	}
}

func TestPowerModes(t *testing.T) {
	tests := []struct {
		args      []string
		mode      string
		cutWhen   bool
		tornSeed  uint64
		wantNotes string
	}{
		{nil, ModeKill, false, 0, "page cache intact"},
		{[]string{"--power-loss"}, ModePowerLoss, false, 0, "fsync durability"},
		{[]string{"--power-loss", "--cut-when-dirty", "--cut-wait=2s"}, ModePowerLoss, true, 0, "FUSE"},
		{[]string{"--power-loss", "--torn-writes", "--torn-seed", "7"}, ModePowerLossTorn, true, 7, "torn writes"},
	}
	for _, tt := range tests {
		spec, err := parseArgs(tt.args)
		if err != nil {
			t.Errorf("parseArgs(%q) = %v", tt.args, err)
			continue
		}
		c, err := resolve(spec)
		if err != nil {
			t.Errorf("resolve(parseArgs(%q)) = %v", tt.args, err)
			continue
		}
		if c.mode() != tt.mode || c.cutWhenDirty != tt.cutWhen || c.tornSeed != tt.tornSeed ||
			!strings.Contains(noteFor(c.mode()), tt.wantNotes) {
			t.Errorf("parseArgs(%q): mode %s, cut when dirty %v, torn seed %d, note %q; want %s, %v, %d, a note with %q",
				tt.args, c.mode(), c.cutWhenDirty, c.tornSeed, noteFor(c.mode()), tt.mode, tt.cutWhen, tt.tornSeed, tt.wantNotes)
		}
	}
}
