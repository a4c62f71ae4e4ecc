package campaign

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseFileFlushMethod(t *testing.T) {
	s, err := ParseFile("testdata/flush-method.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "flush-method" || s.Workload != "oltp" || s.Rounds != 3 ||
		s.Window != (Window{From: 60 * time.Second, To: 300 * time.Second}) {
		t.Errorf("ParseFile() = %+v", s)
	}
	cells := s.Expand()
	if len(cells) != 6 {
		t.Fatalf("Expand() gave %d cells; want 6", len(cells))
	}
	wantLabels := []string{"innodb_flush_method=fsync", "innodb_flush_method=O_DSYNC", "innodb_flush_method=O_DIRECT",
		"innodb_flush_method=O_DIRECT_NO_FSYNC", "fsync + dw on separate disk", "O_DIRECT_NO_FSYNC + dw on separate disk"}
	for i, c := range cells {
		if c.Label != wantLabels[i] {
			t.Errorf("cell %d label = %q; want %q", i, c.Label, wantLabels[i])
		}
	}
	plan := s.Plan()
	if len(plan) != 6*2*3 {
		t.Fatalf("Plan() has %d runs; want 36", len(plan))
	}
	first := plan[0]
	wantArgs := []string{"--tables=100", "--table-size=1000000", "--threads=64", "--time=300", "--binary=/usr/sbin/mysqld",
		"--set", "innodb_buffer_pool_size=48G", "--set", "innodb_redo_log_capacity=8G", "--set", "innodb_flush_method=fsync"}
	if !reflect.DeepEqual(first.Args, wantArgs) || first.Group != "pl1" || first.Round != 1 ||
		!reflect.DeepEqual(first.Selector, map[string]string{"disk": "pl1"}) {
		t.Errorf("Plan()[0] = %+v; want args %v on pl1 round 1", first, wantArgs)
	}
	if plan[12].Round != 2 || plan[12].Cell != 0 {
		t.Errorf("Plan()[12] = round %d cell %d; want round 2 of cell 0 (rounds are the outer loop)", plan[12].Round, plan[12].Cell)
	}
}

func TestMatrixProductOrder(t *testing.T) {
	s, err := Parse("m.yaml", []byte(`
name: m
workload: fio
matrix:
  a: [1, 2]
  --bs: [4k, 16k, 64k]
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Expand() {
		got = append(got, c.Label+"|"+strings.Join(c.Options, ","))
	}
	want := []string{"a=1 bs=4k|--bs=4k", "a=1 bs=16k|--bs=16k", "a=1 bs=64k|--bs=64k",
		"a=2 bs=4k|--bs=4k", "a=2 bs=16k|--bs=16k", "a=2 bs=64k|--bs=64k"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Expand() = %v; want %v", got, want)
	}
	if s.Groups[0].Name != "all" || s.Rounds != 3 {
		t.Errorf("defaults: groups %v rounds %d; want one group \"all\", 3 rounds", s.Groups, s.Rounds)
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // each must appear in the error
	}{
		{"unknown key", "name: x\nworkload: fio\nmatrx:\n  a: [1]\n", []string{"s.yaml:3:1: unknown key \"matrx\""}},
		{"bad workload", "name: x\nworkload: tpcc\nmatrix: {a: [1]}\n", []string{"s.yaml:2:11: unknown workload \"tpcc\" (known: crash, fio, oltp)",
			"s.yaml: workload must be one of crash, fio, oltp"}},
		{"no workload", "name: x\nmatrix: {a: [1]}\n", []string{"s.yaml: workload must be one of crash, fio, oltp"}},
		{"rounds type", "name: x\nworkload: fio\nmatrix: {a: [1]}\nrounds: three\n", []string{"s.yaml:4:9: expected a whole number"}},
		{"bad window", "name: x\nworkload: fio\nmatrix: {a: [1]}\nwindow: 300s-60s\n", []string{"s.yaml:4:9: window"}},
		{"no cells", "name: x\nworkload: fio\n", []string{"needs a matrix or cells"}},
		{"cell without label", "name: x\nworkload: fio\ncells:\n  - set: {a: 1}\n", []string{"s.yaml:4:5: a cell needs a label"}},
		{"selector", "name: x\nworkload: fio\nmatrix: {a: [1]}\ngroups: {g: nvme}\n", []string{"s.yaml:4:13: group \"g\": selector"}},
		{"baseline", "name: x\nworkload: fio\nmatrix: {a: [1]}\nbaseline: zzz\n", []string{"baseline \"zzz\" names no cell"}},
		{"all at once", "workload: fio\nmatrix: {a: []}\nrounds: 0\n", []string{"name is required", "has no values", "whole number"}},
		{"not yaml", "name: [x\n", []string{"s.yaml: yaml:"}},
		{"empty", "", []string{"empty campaign spec"}},
		{"duplicate", "name: x\nname: y\nworkload: fio\nmatrix: {a: [1]}\n", []string{"s.yaml:2:1: duplicate key"}},
	}
	for _, tt := range tests {
		_, err := Parser{Workloads: []string{"crash", "fio", "oltp"}}.Parse("s.yaml", []byte(tt.yaml))
		if err == nil {
			t.Errorf("%s: Parse() succeeded; want an error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: Parse() error = %q; want it to contain %q", tt.name, err, w)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("name: x\nworkload: fio\nmatrix: {a: [1, 2]}\ncells: [{label: c, set: {k: v}}]\ngroups: {g: a=b}\nwindow: 1-2\n"))
	f.Add([]byte("name: &a x\nworkload: *a\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse("f.yaml", b)
		if err != nil {
			return
		}
		// Whatever parses must expand and plan without panicking, with a
		// baseline that names a cell.
		cells := s.Expand()
		if len(cells) == 0 {
			t.Fatalf("parsed spec expands to no cells: %+v", s)
		}
		if n := len(s.Plan()); n != len(cells)*len(s.Groups)*s.Rounds {
			t.Fatalf("Plan() = %d runs; want %d", n, len(cells)*len(s.Groups)*s.Rounds)
		}
	})
}

// TestHostKnobs: a host: section for every cell, host.<knob> matrix axes
// (labelled as written) and a cell's own host: replacing a base knob by
// name; every planned run carries its cell's knobs.
func TestHostKnobs(t *testing.T) {
	s, err := Parse("h.yaml", []byte(`
name: h
workload: fio
host:
  dirty_ratio: 20
  nr_requests: 256
matrix:
  host.scheduler: [mq-deadline, none]
  host.nr_requests: [512, 1024]
cells:
  - label: stock
    host: {nr_requests: 128}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Expand() {
		var kv []string
		for _, h := range c.Host {
			kv = append(kv, h.Key+"="+h.Value)
		}
		got = append(got, c.Label+"|"+strings.Join(kv, ","))
	}
	want := []string{
		"host.scheduler=mq-deadline host.nr_requests=512|dirty_ratio=20,nr_requests=512,scheduler=mq-deadline",
		"host.scheduler=mq-deadline host.nr_requests=1024|dirty_ratio=20,nr_requests=1024,scheduler=mq-deadline",
		"host.scheduler=none host.nr_requests=512|dirty_ratio=20,nr_requests=512,scheduler=none",
		"host.scheduler=none host.nr_requests=1024|dirty_ratio=20,nr_requests=1024,scheduler=none",
		"stock|dirty_ratio=20,nr_requests=128",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cells:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p := s.Plan(); len(p) != 15 || len(p[0].Host) != 3 || len(p[0].Args) != 0 {
		t.Errorf("Plan()[0] = %+v of %d; want the cell's 3 host knobs and no workload args", p[0], len(p))
	}
	if _, err := Parse("h.yaml", []byte("name: h\nworkload: fio\nmatrix:\n  host.: [a]\n")); err == nil || !strings.Contains(err.Error(), "h.yaml:4:") {
		t.Errorf("a host axis without a knob: %v; want refused with its position", err)
	}
}

func TestDiskAxes(t *testing.T) {
	spec := `name: d
workload: fio
disk: {profile: capacity, size: 2G, mount: [noatime, nodiratime]}
matrix:
  disk: [capacity, bare, none]
  disk.bucket: [1000, 2000]
cells:
  - label: gp3 on sdb
    disk: gp3,device=/dev/sdb
`
	s, err := Parse("d.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Expand() {
		got = append(got, c.Label+" => "+c.Disk)
	}
	want := []string{
		"disk=capacity disk.bucket=1000 => capacity,size=2G,mount=noatime+nodiratime,bucket=1000",
		"disk=capacity disk.bucket=2000 => capacity,size=2G,mount=noatime+nodiratime,bucket=2000",
		"disk=bare disk.bucket=1000 => bare,size=2G,mount=noatime+nodiratime,bucket=1000",
		"disk=bare disk.bucket=2000 => bare,size=2G,mount=noatime+nodiratime,bucket=2000",
		"disk=none disk.bucket=1000 => ",
		"disk=none disk.bucket=2000 => ",
		"gp3 on sdb => gp3,device=/dev/sdb",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cells:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p := s.Plan(); p[0].Disk != want[0][strings.Index(want[0], "=> ")+3:] {
		t.Errorf("planned disk %q", p[0].Disk)
	}
	_, err = Parse("e.yaml", []byte("name: e\nworkload: fio\nmatrix:\n  disk.bucket: [1]\n"))
	if err == nil || !strings.Contains(err.Error(), "disk.bucket needs a disk profile") {
		t.Errorf("disk.bucket without a profile: %v", err)
	}
}

// TestParserTakesTheKindsItIsGiven: the workloads a spec may name are the
// Parser's (the command's registered kinds), not a list of campaign's
// own: a kind campaign has never heard of parses when given, a spec
// stored with a campaign parses whatever it names, and one that names
// none is refused either way.
func TestParserTakesTheKindsItIsGiven(t *testing.T) {
	text := []byte("name: x\nworkload: newkind\nmatrix: {a: [1]}\n")
	if s, err := (Parser{Workloads: []string{"fio", "newkind"}}).Parse("s.yaml", text); err != nil || s.Workload != "newkind" {
		t.Errorf("Parser{fio, newkind}.Parse = %v, %v", s, err)
	}
	if _, err := (Parser{Workloads: []string{"fio"}}).Parse("s.yaml", text); err == nil || !strings.Contains(err.Error(), `unknown workload "newkind" (known: fio)`) {
		t.Errorf("Parser{fio}.Parse = %v; want newkind refused", err)
	}
	if s, err := Parse("s.yaml", text); err != nil || s.Workload != "newkind" {
		t.Errorf("Parse (a stored spec) = %v, %v", s, err)
	}
	if _, err := Parse("s.yaml", []byte("name: x\nmatrix: {a: [1]}\n")); err == nil || !strings.Contains(err.Error(), "s.yaml: workload is required") {
		t.Errorf("Parse without a workload = %v", err)
	}
}
