package crash

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/writepath/writepath/mysqld"
	"github.com/writepath/writepath/powerloss"
	"github.com/writepath/writepath/workload/crash/innodbpage"
	"github.com/writepath/writepath/workload/crash/innodbpage/pagetest"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestInspectTorn(t *testing.T) {
	dir := pagetest.TornDatadir(t)
	c := &PowerCut{Torn: true, Files: []powerloss.FileCut{
		{Path: "data/sbtest/t1.ibd", Lost: []powerloss.LostWrite{
			{Seq: 0, Offset: 0, Length: pagetest.PageSize, Kept: 8192, Torn: true},
			{Seq: 1, Offset: 3 * pagetest.PageSize, Length: pagetest.PageSize, Kept: 4096, Torn: true},
			{Seq: 2, Offset: 5 * pagetest.PageSize, Length: pagetest.PageSize},                      // dropped whole: page 5 is old, not torn
			{Seq: 3, Offset: 0, Length: 2 * pagetest.PageSize, Kept: pagetest.PageSize, Torn: true}, // torn at a page boundary: no torn page
			{Seq: 4, Offset: 0, Length: pagetest.PageSize, Kept: 8192, Torn: true},                  // page 0 again: one page
		}},
		{Path: "data/ibdata1", Lost: []powerloss.LostWrite{
			{Seq: 0, Offset: 64 * pagetest.PageSize, Length: 128 * pagetest.PageSize, Kept: 4096, Torn: true}, // the doublewrite batch itself
		}},
		{Path: "data/ib_logfile0", Lost: []powerloss.LostWrite{{Offset: 12288, Length: 512, Kept: 0}}},
	}}
	c.inspectTorn(innodbFilesOf(dir, nil, powerLayout{mounts: []mountDir{{role: "data", backing: dir}}}))
	path := filepath.Join(dir, "sbtest", "t1.ibd")
	want := []TornPage{
		{File: "data/sbtest/t1.ibd", Path: path, Page: 0, SpaceID: 7, Kept: 8192, OnDisk: innodbpage.Corrupt, Copy: true, CopyLSN: 5000, CopyUsable: true},
		{File: "data/sbtest/t1.ibd", Path: path, Page: 3, SpaceID: 7, Kept: 4096, OnDisk: innodbpage.Corrupt, Copy: true, CopyLSN: 100},
	}
	if c.InspectError != "" || c.CheckpointLSN != 4000 || len(c.TornPages) != len(want) {
		t.Fatalf("inspect: error %q, checkpoint %d, torn pages %+v; want none, 4000, %+v", c.InspectError, c.CheckpointLSN, c.TornPages, want)
	}
	for i := range want {
		if c.TornPages[i] != want[i] {
			t.Errorf("torn page %d = %+v; want %+v", i, c.TornPages[i], want[i])
		}
	}
	if s := c.String(); !strings.Contains(s, "2 torn page(s), 1 with a usable doublewrite copy") {
		t.Errorf("cut line %q does not count the torn pages", s)
	}
	if s := c.TornPages[0].String(); !strings.Contains(s, "page 0 (space 7)") || !strings.Contains(s, "usable copy (LSN 5000)") {
		t.Errorf("torn page line %q", s)
	}
}

func TestTrimLost(t *testing.T) {
	var lost []powerloss.LostWrite
	for i := range 100 {
		lost = append(lost, powerloss.LostWrite{Seq: i, Torn: i%10 == 9})
	}
	c := &PowerCut{Files: []powerloss.FileCut{{Path: "data/ib_logfile0", Lost: lost, LostOmitted: 5}, {Path: "data/x.ibd", Lost: lost[:3]}}}
	c.trimLost()
	got := c.Files[0]
	torn := 0
	for i, w := range got.Lost {
		if w.Torn {
			torn++
		}
		if i > 0 && got.Lost[i-1].Seq >= w.Seq {
			t.Fatalf("out of write order: %+v", got.Lost)
		}
	}
	if len(got.Lost) != maxLostKept || torn != 10 || got.LostOmitted != 5+100-maxLostKept || len(c.Files[1].Lost) != 3 {
		t.Errorf("trimmed to %d (%d torn), omitted %d, short list %d; want %d with all 10 torn, %d omitted, 3 untouched",
			len(got.Lost), torn, got.LostOmitted, len(c.Files[1].Lost), maxLostKept, 5+100-maxLostKept)
	}
}

func TestInspectTornReportsUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	c := &PowerCut{Torn: true, Files: []powerloss.FileCut{{Path: "data/sbtest/t1.ibd",
		Lost: []powerloss.LostWrite{{Offset: 0, Length: pagetest.PageSize, Kept: 4096, Torn: true}}}}}
	c.inspectTorn(innodbFilesOf(dir, nil, powerLayout{mounts: []mountDir{{role: "data", backing: dir}}}))
	if !strings.Contains(c.InspectError, "ibdata1") || len(c.TornPages) != 0 {
		t.Errorf("inspect without files: error %q, pages %+v; want an error naming ibdata1", c.InspectError, c.TornPages)
	}
}

func TestInnodbFilesOf(t *testing.T) {
	l := powerLayout{mounts: []mountDir{{role: "data", backing: "/d"}}}
	for _, tt := range []struct {
		settings     []string
		ibdata, redo string
	}{
		{nil, "/d/ibdata1", "/d/ib_logfile0"},
		{[]string{"innodb_data_file_path=ibdata7:12M;ibdata8:1G:autoextend", "innodb-log-group-home-dir=/r"}, "/d/ibdata7", "/r/ib_logfile0"},
		{[]string{"innodb_data_home_dir=sys", "innodb_log_group_home_dir=./redo"}, "/d/sys/ibdata1", "/d/redo/ib_logfile0"},
	} {
		var set []mysqld.Setting
		for _, s := range tt.settings {
			k, v, _ := strings.Cut(s, "=")
			set = append(set, mysqld.Setting{Key: k, Value: v})
		}
		f := innodbFilesOf("/d", set, l)
		if f.ibdata != tt.ibdata || f.redo != tt.redo || f.roots["data"] != "/d" {
			t.Errorf("settings %v: ibdata %s, redo %s; want %s, %s", tt.settings, f.ibdata, f.redo, tt.ibdata, tt.redo)
		}
	}
}
