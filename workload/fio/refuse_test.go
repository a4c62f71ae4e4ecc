package fio

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestParseOnlyAcceptsWhatFioAccepts: job files using what fio 3.33 parses
// but writepath cannot run (engines needing hardware or libraries, their
// options, fio options not built here) pass --parse-only in both, and a
// run is refused before any I/O, naming the file, the line and why. Jobs
// fio refuses under --parse-only are refused by both.
func TestParseOnlyAcceptsWhatFioAccepts(t *testing.T) {
	fio := fioPath(t)
	tests := []struct {
		name, text string
		parses     bool   // fio and writepath --parse-only succeed
		runErr     string // what the refusal to run says (parses) or the parse error
	}{
		{"ceph", "[global]\nioengine=rbd\nclientname=admin\npool=p\nrbdname=img\n[j]\nrw=randwrite\n", true, "ceph.fio:2: option ioengine=rbd: not supported: needs a Ceph cluster"},
		{"engine-after-options", "[j]\nuri=nbd://localhost\nioengine=nbd\nrw=read\nsize=1m\n", true, "option ioengine=nbd"},
		{"no-size-cpuio", "[j]\nioengine=cpuio\ncpuload=50\ncpumode=noop\n", true, "burns CPU"},
		{"zbd", "[j]\nsize=8m\nzonemode=zbd\nmax_open_zones=4\n", true, "zbd.fio:3: option zonemode=zbd: not supported: zoned block devices"},
		// fio 3.33's zonemode defaults to none
		// fio 3.33's zonemode defaults to none; it checks these when it
		// runs the job
		{"zonesize-alone", "[j]\nsize=8m\nzonesize=1m\n", true, "--zonemode=none and --zonesize are not compatible"},
		{"strided-no-size", "[j]\nsize=8m\nzonemode=strided\n", true, "--zonesize must be specified"},
		{"prerun", "[j]\nsize=8m\nexec_prerun=true\n", true, "prerun.fio:3: option exec_prerun=true: not supported: running commands"},
		{"files", "[j]\nsize=8m\nnrfiles=4\nioengine=mmap\n", true, "option nrfiles=4: not supported: ioengine=mmap with several files"},
		{"colon", "[j]\nsize=8m\nfilename=a:b\nrw=trimwrite\n", true, "trimwrite with several files"},
		{"nrfiles-over", "[j]\nsize=8m\nnrfiles=70000\n", true, "at most 65536 files per job"},
		{"files-verify", "[j]\nsize=8m\nnrfiles=2\nrw=write\nverify=md5\n", true, "verify= with several files"},
		{"uring-option", "[j]\nsize=8m\nioengine=io_uring\nsqthread_poll=1\n", true, "writepath's io_uring engine runs with fio's engine defaults; its sqthread_poll option"},
		{"offload-aio", "[j]\nsize=8m\nioengine=libaio\nio_submit_mode=offload\n", true, "io_submit_mode=offload"},
		{"unknown-engine", "[j]\nsize=8m\nioengine=made_up_engine\n", true, "no such engine here"},
		// an option of another engine, in fio "Bad option"
		{"wrong-engine", "[j]\nsize=8m\nioengine=psync\nclientname=admin\n", false, `option "clientname": unknown option`},
		// fio's rdma engine reads port= as a number
		{"placeholder", "[j]\nsize=8m\nioengine=rdma\nport=[port]\n", false, "option port=[port]: invalid value"},
		{"bogus", "[j]\nsize=8m\nfrobnicate=1\n", false, `option "frobnicate": unknown option`},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeJob(t, dir, tt.name+".fio", tt.text)
			cmd := exec.Command(fio, "--parse-only", path)
			cmd.Dir = dir
			out, fioErr := cmd.CombinedOutput()
			if (fioErr == nil) != tt.parses {
				t.Fatalf("fio 3.33 --parse-only: %v %s; the test expects it to parse: %v", fioErr, out, tt.parses)
			}
			_, err := ParseCommand([]string{"--parse-only", path})
			if (err == nil) != tt.parses {
				t.Fatalf("--parse-only = %v; want it to parse: %v (fio: %v)", err, tt.parses, fioErr)
			}
			if !tt.parses {
				if !strings.Contains(err.Error(), tt.runErr) {
					t.Errorf("--parse-only = %v; want it to say %q", err, tt.runErr)
				}
				return
			}
			_, err = ParseArgs([]string{path})
			if err == nil || !strings.Contains(err.Error(), tt.runErr) ||
				!errors.Is(err, ErrUnsupported) && !strings.Contains(tt.runErr, "--zone") {
				t.Errorf("run = %v; want not supported, saying %q", err, tt.runErr)
			}
			c, _ := ParseCommand([]string{"--parse-only", path})
			if _, err := NewFromSpec(c.Spec); err == nil {
				t.Error("NewFromSpec accepted a spec with a refusal")
			}
		})
	}
}

// TestRefusalReplacedBySetting: a job setting again an option its global
// section gave a value it cannot run with runs with the job's value; a
// global's refusal is reported once, not once per job.
func TestRefusalReplacedBySetting(t *testing.T) {
	dir := t.TempDir()
	path := writeJob(t, dir, "g.fio", "[global]\nioengine=rbd\nsize=1m\n[a]\nioengine=null\n[b]\n[c]\n")
	_, err := ParseArgs([]string{path})
	if err == nil || strings.Count(err.Error(), "option ioengine=rbd") != 1 || strings.Contains(err.Error(), "g.fio:5") {
		t.Fatalf("ParseArgs = %v; want one refusal of the global's ioengine=rbd (jobs b and c)", err)
	}
	path = writeJob(t, dir, "h.fio", "[global]\nioengine=rbd\nsize=1m\n[a]\nioengine=null\n")
	if _, err := ParseArgs([]string{path}); err != nil {
		t.Fatalf("ParseArgs(job's own runnable engine) = %v", err)
	}
}
