package fio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

var issueArgs = strings.Fields(`--name=mysql_sim --ioengine=libaio --iodepth=32 --rw=randwrite --bs=4k
	--size=1G --numjobs=4 --runtime=20 --time_based --group_reporting --direct=1 --fsync=4 --output-format=json`)

// resolved strips what legitimately differs between sources (where the job
// was written, the options as typed) so the resolved jobs can be compared.
func resolved(t *testing.T, spec *fiov1.Spec) []*fiov1.Job {
	t.Helper()
	var out []*fiov1.Job
	for _, j := range spec.Jobs {
		c := proto.Clone(j).(*fiov1.Job)
		c.Origin, c.Options = "", nil
		out = append(out, c)
	}
	return out
}

func TestCommandLineAndJobFileGiveTheSameJob(t *testing.T) {
	fromArgs, err := ParseArgs(issueArgs)
	if err != nil {
		t.Fatalf("ParseArgs(%q) = %v", issueArgs, err)
	}
	fromFile, err := ParseArgs([]string{"testdata/jobs/mysql_sim.fio", "--output-format=json"})
	if err != nil {
		t.Fatalf("ParseArgs(job file) = %v", err)
	}
	a, b := resolved(t, fromArgs), resolved(t, fromFile)
	if len(a) != 1 || len(b) != 1 || !proto.Equal(a[0], b[0]) {
		t.Fatalf("command line gives %v\njob file gives %v", a, b)
	}
	want := &fiov1.Job{Name: "mysql_sim", Rw: fiov1.ReadWrite_READ_WRITE_RANDWRITE, Rwmixread: 50, Bs: 4096,
		Size: 1 << 30, Numjobs: 4, Iodepth: 32, Ioengine: fiov1.IOEngine_IO_ENGINE_LIBAIO, Direct: true,
		Sync: fiov1.SyncMode_SYNC_MODE_NONE, Fsync: 4, RuntimeNs: int64(20 * time.Second), TimeBased: true,
		Randrepeat: true, Randseed: 0x89, Fallocate: fiov1.Fallocate_FALLOCATE_NATIVE, GroupReporting: true, Loops: 1}
	def := defaultJob()
	want.ReadBs, want.WriteBs, want.TrimBs, want.Invalidate, want.ClatPercentiles = def.ReadBs, def.WriteBs, def.TrimBs, true, true
	want.Verify, want.DoVerify, want.RateProcess, want.Logs = def.Verify, true, def.RateProcess, def.Logs
	want.IodepthBatchSubmit, want.IodepthBatchCompleteMin, want.RandomDistribution = 1, 1, def.RandomDistribution
	want.ThinktimeBlocks = def.ThinktimeBlocks
	if !proto.Equal(a[0], want) {
		t.Errorf("ParseArgs(issue job) = %v; want %v", a[0], want)
	}
	if fromArgs.OutputFormat != fiov1.OutputFormat_OUTPUT_FORMAT_JSON || fromFile.OutputFormat != fromArgs.OutputFormat {
		t.Errorf("output formats %v, %v; want JSON", fromArgs.OutputFormat, fromFile.OutputFormat)
	}
}

// TestEveryOption sets each supported option once and checks the field.
func TestEveryOption(t *testing.T) {
	tests := []struct {
		arg   string
		check func(j *fiov1.Job) bool
	}{
		{"--filename=/var/tmp/x", func(j *fiov1.Job) bool { return j.Filename == "/var/tmp/x" }},
		{"--directory=/var/tmp", func(j *fiov1.Job) bool { return j.Directory == "/var/tmp" }},
		{"--rw=randrw", func(j *fiov1.Job) bool { return j.Rw == fiov1.ReadWrite_READ_WRITE_RANDRW }},
		{"--readwrite=rw", func(j *fiov1.Job) bool { return j.Rw == fiov1.ReadWrite_READ_WRITE_RW }},
		{"--rw=readwrite", func(j *fiov1.Job) bool { return j.Rw == fiov1.ReadWrite_READ_WRITE_RW }},
		{"--rw=read", func(j *fiov1.Job) bool { return j.Rw == fiov1.ReadWrite_READ_WRITE_READ }},
		{"--rw=write", func(j *fiov1.Job) bool { return j.Rw == fiov1.ReadWrite_READ_WRITE_WRITE }},
		{"--rw=randread", func(j *fiov1.Job) bool { return j.Rw == fiov1.ReadWrite_READ_WRITE_RANDREAD }},
		{"--rwmixread=70", func(j *fiov1.Job) bool { return j.Rwmixread == 70 }},
		{"--rwmixwrite=30", func(j *fiov1.Job) bool { return j.Rwmixread == 70 }},
		{"--bs=16k", func(j *fiov1.Job) bool { return j.Bs == 16384 }},
		{"--blocksize=1m", func(j *fiov1.Job) bool { return j.Bs == 1<<20 }},
		{"--size=2g", func(j *fiov1.Job) bool { return j.Size == 2<<30 }},
		{"--offset=4KiB", func(j *fiov1.Job) bool { return j.Offset == 4000 }}, // fio 3.33: KiB is 1000 at kb_base=1024
		{"--numjobs=3", func(j *fiov1.Job) bool { return j.Numjobs == 3 }},
		{"--iodepth=64", func(j *fiov1.Job) bool { return j.Iodepth == 64 }},
		{"--ioengine=psync", func(j *fiov1.Job) bool { return j.Ioengine == fiov1.IOEngine_IO_ENGINE_PSYNC }},
		{"--ioengine=sync", func(j *fiov1.Job) bool { return j.Ioengine == fiov1.IOEngine_IO_ENGINE_SYNC }},
		{"--ioengine=pvsync", func(j *fiov1.Job) bool { return j.Ioengine == fiov1.IOEngine_IO_ENGINE_PVSYNC }},
		{"--ioengine=io_uring", func(j *fiov1.Job) bool { return j.Ioengine == fiov1.IOEngine_IO_ENGINE_IO_URING }},
		{"--direct=1", func(j *fiov1.Job) bool { return j.Direct }},
		{"--buffered=0", func(j *fiov1.Job) bool { return j.Direct }},
		{"--sync=dsync", func(j *fiov1.Job) bool { return j.Sync == fiov1.SyncMode_SYNC_MODE_DSYNC }},
		{"--sync=1", func(j *fiov1.Job) bool { return j.Sync == fiov1.SyncMode_SYNC_MODE_SYNC }},
		{"--fsync=8", func(j *fiov1.Job) bool { return j.Fsync == 8 }},
		{"--fdatasync=2", func(j *fiov1.Job) bool { return j.Fdatasync == 2 }},
		{"--end_fsync=1", func(j *fiov1.Job) bool { return j.EndFsync }},
		{"--runtime=2m", func(j *fiov1.Job) bool { return j.RuntimeNs == int64(2*time.Minute) }},
		{"--runtime=500ms", func(j *fiov1.Job) bool { return j.RuntimeNs == int64(500*time.Millisecond) }},
		{"--time_based", func(j *fiov1.Job) bool { return j.TimeBased }},
		{"--ramp_time=5", func(j *fiov1.Job) bool { return j.RampTimeNs == int64(5*time.Second) }},
		{"--startdelay=1s", func(j *fiov1.Job) bool { return j.StartdelayNs == int64(time.Second) }},
		{"--rate_iops=500", func(j *fiov1.Job) bool { return j.RateIops == 500 }},
		{"--rate=1m,256k", func(j *fiov1.Job) bool { return j.Rate[0] == 1<<20 && j.Rate[1] == 256<<10 }},
		{"--ratemin=64k", func(j *fiov1.Job) bool { return j.RateMin[0] == 64<<10 && j.RateMin[1] == 64<<10 }},
		{"--rate_process=poisson", func(j *fiov1.Job) bool { return j.RateProcess == fiov1.RateProcess_RATE_PROCESS_POISSON }},
		{"--flow=8", func(j *fiov1.Job) bool { return j.Flow == 8 }},
		{"--flow_sleep=100", func(j *fiov1.Job) bool { return j.FlowSleepNs == int64(100*time.Microsecond) }},
		{"--io_submit_mode=offload", func(j *fiov1.Job) bool { return j.SubmitOffload }},
		{"--random_generator=lfsr", func(j *fiov1.Job) bool { return j.RandomLfsr }},
		{"--randrepeat=0", func(j *fiov1.Job) bool { return !j.Randrepeat && j.Randseed != 0x89 }},
		{"--randseed=42", func(j *fiov1.Job) bool { return j.Randseed == 42 }},
		{"--norandommap", func(j *fiov1.Job) bool { return j.Norandommap }},
		{"--fallocate=none", func(j *fiov1.Job) bool { return j.Fallocate == fiov1.Fallocate_FALLOCATE_NONE }},
		{"--fallocate=posix", func(j *fiov1.Job) bool { return j.Fallocate == fiov1.Fallocate_FALLOCATE_POSIX }},
		{"--fallocate=keep", func(j *fiov1.Job) bool { return j.Fallocate == fiov1.Fallocate_FALLOCATE_KEEP }},
		{"--fallocate=truncate", func(j *fiov1.Job) bool { return j.Fallocate == fiov1.Fallocate_FALLOCATE_TRUNCATE }},
		{"--overwrite=1", func(j *fiov1.Job) bool { return j.Overwrite }},
		{"--group_reporting", func(j *fiov1.Job) bool { return j.GroupReporting }},
		{"--loops=3", func(j *fiov1.Job) bool { return j.Loops == 3 }},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			args := []string{"--name=j", "--size=1m", tt.arg}
			spec, err := ParseArgs(args)
			if err != nil {
				t.Fatalf("ParseArgs(%q) = %v", args, err)
			}
			if !tt.check(spec.Jobs[0]) {
				t.Errorf("ParseArgs(%q) = %v; option not applied", args, spec.Jobs[0])
			}
		})
	}
}

func TestOutputOptions(t *testing.T) {
	spec, err := ParseArgs([]string{"--output-format", "json+", "--output=/var/tmp/r.json", "--name=j", "--size", "1m"})
	if err != nil {
		t.Fatal(err)
	}
	if spec.OutputFormat != fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS || spec.Output != "/var/tmp/r.json" || spec.Jobs[0].Size != 1<<20 {
		t.Errorf("ParseArgs = %v", spec)
	}
}

func TestRejections(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr error
		wantMsg string
	}{
		{[]string{"--name=j", "--size=1m", "--bogus=1"}, ErrUnknownOption, `"bogus"`},
		{[]string{"--name=j", "--size=1m", "--read_iolog=/nonexistent/x"}, ErrInvalidValue, `read_iolog: open /nonexistent/x`},
		{[]string{"--name=j", "--size=1m", "--replay_skip=read"}, ErrUnsupported, `replay is built for fio's version 2 and 3`},
		{[]string{"--name=j", "--size=1m", "--rw=randtrim", "--verify=md5"}, ErrInvalidValue, `verify= with rw=randtrim`},
		{[]string{"--name=j", "--size=1m", "--write_hist_log=h", "--log_store_compressed=1"}, ErrInvalidValue, `log_store_compressed with write_hist_log`},
		{[]string{"--name=j", "--size=1m", "--ioengine=rbd"}, ErrUnsupported, `needs a Ceph cluster`},
		{[]string{"--name=j", "--size=1m", "--bssplit=4k/60:8k/60"}, ErrInvalidValue, `add up to 120`},
		{[]string{"--name=j", "--size=1m", "--random_distribution=zipf:1"}, ErrInvalidValue, `theta`},
		{[]string{"--name=j", "--size=1m", "--wait_for=nobody"}, ErrInvalidValue, `wait_for=nobody`},
		{[]string{"--name=j", "--size=1m", "--percentile_list=50:101"}, ErrInvalidValue, `between 0 and 100`},
		{[]string{"--readonly", "--name=j", "--size=1m", "--rw=write"}, ErrInvalidValue, `--readonly`},
		{[]string{"--name=j", "--size=1m", "--debug=io"}, ErrUnsupported, `--debug`},
		{[]string{"--name=j", "--size=1m", "--terse-version=7"}, ErrInvalidValue, `terse version`},
		{[]string{"--name=j", "--size=4q"}, ErrUnsupported, `size=4q`},
		{[]string{"--name=j", "--size=1m", "--bs=4x"}, ErrUnsupported, `bs=4x: not supported: fio 3.33 reads "4x" as 4,`},
		{[]string{"--name=j", "--size=1m", "--rwmixread=101"}, ErrInvalidValue, `max value out of range: 101 (100 max)`},
		{[]string{"--name=j", "--size=1m", "--iodepth=0"}, ErrInvalidValue, `min value out of range: 0 (1 min)`},
		{[]string{"--name=j", "--size=1m", "--rw=randomwrite"}, ErrInvalidValue, `rw=randomwrite`},
		{[]string{"--name=j", "--size=1m", "--ioengine=spdk"}, ErrUnsupported, `ioengine=spdk`},
		{[]string{"--name=j", "--size=101%"}, ErrInvalidValue, `max value out of range`},
		{[]string{"--name=j", "--size=1m", "--runtime=5x"}, ErrUnsupported, `runtime=5x: not supported: fio 3.33 reads "5x" as 5µs,`},
		{[]string{"--name=j", "--size=1m", "--runtime=x"}, ErrInvalidValue, `runtime=x`},
		{[]string{"--name=j", "--size=1m", "--output-format=xml"}, ErrInvalidValue, `output-format=xml`},
		{[]string{"--name=j", "--size=1m", "--direct=2"}, ErrInvalidValue, `direct=2`},
		{[]string{"--name=j", "--size=1k", "--bs=4k"}, ErrInvalidValue, `size too small, must not be less than minimum block size: 1024 < 4096`},
		{[]string{"--name=j", "--size=1m", "--filename=a:b", "--ioengine=mmap"}, ErrUnsupported, `ioengine=mmap with several files`},
		{[]string{"--name=j", "--size=1m", "--nrfiles=70000"}, ErrUnsupported, `at most 65536 files per job`},
		{[]string{"--name=j", "--size=1m", "--nrfiles=0"}, ErrUnsupported, `nrfiles=0: fio runs the job with no file`},
		{[]string{"--name=j", "--size=1m", "--nrfiles=-1"}, ErrInvalidValue, `nrfiles=-1`},
		{[]string{"--name=j", "--size=1m", "--nrfiles=2", "--file_service_type=lottery"}, ErrInvalidValue, `want random, roundrobin, sequential`},
		{[]string{"--name=j", "--size=1m", "--nrfiles=2", "--file_service_type=pareto:1.5"}, ErrInvalidValue, `pareto input 1.5 out of range`},
		{[]string{"--name=j", "--size=1m", "--nrfiles=2", "--file_service_type=zipf:1"}, ErrInvalidValue, `zipf theta must be different than 1.0`},
		{[]string{"--name=j", "--size=1m", "--nrfiles=2", "--file_service_type=zipf:1.2:3"}, ErrInvalidValue, `center out of range`},
	}
	for _, tt := range tests {
		_, err := ParseArgs(tt.args)
		if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
			t.Errorf("ParseArgs(%q) = %v; want %v mentioning %q", tt.args, err, tt.wantErr, tt.wantMsg)
		}
	}
	if _, err := ParseArgs([]string{"--bs=4k"}); err == nil || !strings.Contains(err.Error(), "no job defined") {
		t.Errorf("ParseArgs(no --name) = %v; want no job defined", err)
	}
}

func TestEveryProblemReportedAtOnce(t *testing.T) {
	_, err := ParseArgs([]string{"--name=j", "--size=1m", "--bogus=1", "--iodepth=0", "--rw=x"})
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("ParseArgs(3 problems) = %v; want 3 lines", err)
	}
}

func TestJobFileErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.fio")
	text := "bs=4k\n[j]\nsize=1m\n; fine\nfrobnicate=3\n[k\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ParseArgs([]string{path})
	for _, want := range []string{path + ":1:", path + ":6:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseArgs(%s) = %v; want it to name %s", path, err, want)
		}
	}
	if err := os.WriteFile(path, []byte("[j]\nsize=1m\nfrobnicate=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseArgs([]string{path}); !errors.Is(err, ErrUnknownOption) || !strings.Contains(err.Error(), path+":3:") {
		t.Errorf("ParseArgs(unknown in file) = %v; want %s:3: unknown option", err, path)
	}
}

func TestGlobalsApplyToLaterJobs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "two.fio")
	text := "[global]\nsize=1m\nbs=8k\n[a]\nrw=write\n[b]\nbs=16k\nname=renamed\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err := ParseArgs([]string{"--iodepth=4", path, "--name=c", "--size=2m"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*fiov1.Job{}
	for _, j := range spec.Jobs {
		got[j.Name] = j
	}
	tests := []struct {
		name   string
		bs     uint64
		depth  uint32
		size   uint64
		global bool
	}{
		{"c", 4096, 4, 2 << 20, true}, {"a", 8192, 4, 1 << 20, true}, {"renamed", 16384, 4, 1 << 20, true},
	}
	for _, tt := range tests {
		j := got[tt.name]
		if j == nil || j.Bs != tt.bs || j.Iodepth != tt.depth || j.Size != tt.size {
			t.Errorf("job %s = %v; want bs=%d iodepth=%d size=%d", tt.name, j, tt.bs, tt.depth, tt.size)
		}
	}
	if len(spec.GlobalOptions) != 3 {
		t.Errorf("global options = %v; want iodepth, size, bs", spec.GlobalOptions)
	}
}

func TestUnits(t *testing.T) {
	sizes := []struct {
		in   string
		want uint64
	}{{"4k", 4096}, {"4K", 4096}, {"4kb", 4096}, {"4KiB", 4000}, {"1m", 1 << 20}, {"1G", 1 << 30},
		{"2t", 2 << 40}, {"512", 512}, {"0x1000", 4096}, {"3b", 3}}
	for _, tt := range sizes {
		if got, err := parseSize(tt.in); err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "k", "4q", "-1", "4 k", "99999999999999999999"} {
		if got, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) = %d; want an error", bad, got)
		}
	}
	times := []struct {
		in   string
		want time.Duration
	}{{"20", 20 * time.Second}, {"1500ms", 1500 * time.Millisecond}, {"2m", 2 * time.Minute}, {"10us", 10 * time.Microsecond}, {"1h", time.Hour}}
	for _, tt := range times {
		if got, err := parseTime(tt.in); err != nil || got != tt.want {
			t.Errorf("parseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestSpecRoundTripsThroughRegistry(t *testing.T) {
	b, err := fromArgs(issueArgs)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(b)
	if err != nil {
		t.Fatalf("New(fromArgs(issue job)) = %v", err)
	}
	if got := w.(*Workload).Spec().Jobs[0].Numjobs; got != 4 {
		t.Errorf("decoded numjobs = %d; want 4", got)
	}
	if _, err := New([]byte{0xff, 0xff}); err == nil {
		t.Error("New(garbage) = nil error")
	}
	if _, err := NewFromSpec(&fiov1.Spec{Jobs: []*fiov1.Job{{Name: "x"}}}); err == nil {
		t.Error("NewFromSpec(job without size, rw, engine) = nil error; want every problem")
	}
}
