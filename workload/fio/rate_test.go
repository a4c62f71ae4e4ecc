package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fioKB runs args with the real fio 3.33 and returns its first job's
// read and write io_kbytes and error.
func fioKB(t *testing.T, args ...string) (r, w int64, errno int) {
	t.Helper()
	out, _ := exec.Command(fioPath(t), append(args, "--output-format=json")...).Output()
	var doc struct {
		Jobs []struct {
			Error int `json:"error"`
			Read  struct {
				KB int64 `json:"io_kbytes"`
			} `json:"read"`
			Write struct {
				KB int64 `json:"io_kbytes"`
			} `json:"write"`
		} `json:"jobs"`
	}
	// A job that fails prints fio's "fio: pid=..., err=..." line first.
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Jobs) == 0 {
		t.Fatalf("fio %q: %v\n%s", args, err, out)
	}
	j := doc.Jobs[0]
	return j.Read.KB, j.Write.KB, j.Error
}

// near reports whether got is within frac of want.
func near(got, want int64, frac float64) bool {
	return float64(got) >= float64(want)*(1-frac) && float64(got) <= float64(want)*(1+frac)
}

// TestRateMatchesFio: rate= per direction (bandwidth), rate_iops= with
// rate_process=poisson move the bytes fio moves over the same time. The
// rate is a ceiling, so a loaded machine can only come in low: the bound
// above is tight, the one below loose.
func TestRateMatchesFio(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		rd, wr int64 // KiB over 2 s
	}{
		{[]string{"--rw=randrw", "--rate=1m,256k"}, 2048, 512},
		{[]string{"--rw=write", "--rate=,512k"}, 0, 1024},
		{[]string{"--rw=randwrite", "--rate_iops=250", "--rate_process=poisson"}, 0, 2000},
	} {
		args := append([]string{"--name=r", "--ioengine=null", "--size=1g", "--bs=4k", "--time_based", "--runtime=2"}, tt.args...)
		fr, fw, _ := fioKB(t, args...)
		if !near(fr, tt.rd, 0.1) || !near(fw, tt.wr, 0.1) {
			t.Logf("fio %q moved %d/%d KiB; expected %d/%d (a loaded machine?)", tt.args, fr, fw, tt.rd, tt.wr)
		}
		w, _, err := runArgs(t, t.TempDir(), args...)
		if err != nil {
			t.Fatal(err)
		}
		st := totals(t, w)
		gr, gw := st.dir[dirRead].bytes>>10, st.dir[dirWrite].bytes>>10
		// Poisson arrivals spread more: 2 s of 250/s is 500 +- ~22 (1 sigma).
		hi := 1.03
		if strings.Contains(strings.Join(tt.args, " "), "poisson") {
			hi = 1.15
		}
		for _, c := range []struct{ got, want int64 }{{gr, tt.rd}, {gw, tt.wr}} {
			if float64(c.got) > float64(c.want)*hi+8 || float64(c.got) < float64(c.want)*0.7 {
				t.Errorf("%q moved %d/%d KiB in 2 s; want %d/%d (fio %d/%d)", tt.args, gr, gw, tt.rd, tt.wr, fr, fw)
			}
		}
	}
}

// TestRateMinEndsJob: an unmet rate_iops_min= ends the job after fio's
// 2 s settle period with EIO (error 5) and fio's message, as it ends
// fio's; floors above the rate, and rate with rate_iops, are refused when
// parsed, as fio refuses them.
func TestRateMinEndsJob(t *testing.T) {
	base := []string{"--name=r", "--ioengine=null", "--size=1g", "--bs=4k", "--rw=randwrite", "--runtime=1", "--time_based"}
	for _, bad := range [][]string{{"--rate_iops=10", "--rate_iops_min=100"}, {"--rate=40k", "--rate_min=1m"},
		{"--rate=1m", "--rate_iops=10"}, {"--rate_min=1m", "--rate_iops_min=10"}} {
		args := append(append([]string{}, base...), bad...)
		if err := exec.Command(fioPath(t), args...).Run(); err == nil {
			t.Errorf("fio accepts %q", bad)
		}
		if _, err := ParseArgs(args); err == nil {
			t.Errorf("ParseArgs(%q) = nil; fio refuses it", bad)
		}
	}
	job := []string{"--name=r", "--size=64k", "--bs=4k", "--time_based", "--runtime=6", "--rw=randwrite",
		"--rate_iops_min=1000000", "--fsync=1"}
	_, _, fioErr := fioKB(t, append(job, "--directory="+t.TempDir())...)
	var out bytes.Buffer
	err := RunCommand(context.Background(), append(job, "--directory="+t.TempDir(), "--output-format=json"), &out, &out, "t")
	if !errors.Is(err, unix.EIO) || !strings.Contains(err.Error(), "rate_iops_min=1000000 not met, got ") {
		t.Errorf("unmet rate_iops_min: err = %v; want EIO with fio's message", err)
	}
	if fioErr != int(unix.EIO) {
		t.Errorf("fio's error for the same job = %d; want 5 (EIO)", fioErr)
	}
	if !strings.Contains(out.String(), `"error" : 5`) {
		t.Errorf("JSON lacks error 5:\n%s", out.String())
	}
}

// TestLFSRVisitsEveryBlockOnce: random_generator=lfsr keeps fio's
// guarantee under norandommap (no offset twice in a loop), and
// io_submit_mode takes inline and refuses offload with the reason.
func TestLFSRVisitsEveryBlockOnce(t *testing.T) {
	for _, tt := range []struct {
		gen  string
		once bool
	}{{"lfsr", true}, {"tausworthe", false}} {
		spec := specOf(t, "--name=l", "--size=1m", "--bs=4k", "--rw=randwrite", "--norandommap", "--random_generator="+tt.gen)
		g := newGenerator(spec.Jobs[0], 0, 1<<20, 42)
		seen := map[uint64]bool{}
		dup := false
		for i := 0; i < 256; i++ {
			off, _, ok := g.next(dirWrite)
			if !ok {
				t.Fatalf("%s: block %d: no offset", tt.gen, i)
			}
			dup = dup || seen[off]
			seen[off] = true
		}
		if dup == tt.once {
			t.Errorf("random_generator=%s with norandommap: a repeated offset is %v; want %v", tt.gen, dup, !tt.once)
		}
	}
	if _, err := ParseArgs([]string{"--name=x", "--size=1m", "--io_submit_mode=inline"}); err != nil {
		t.Errorf("io_submit_mode=inline: %v", err)
	}
	if _, err := ParseArgs([]string{"--name=x", "--size=1m", "--io_submit_mode=offload", "--ioengine=libaio"}); err == nil || !strings.Contains(err.Error(), "queue their own I/O") {
		t.Errorf("io_submit_mode=offload with libaio: %v; want a refusal that says why", err)
	}
}

// TestOffloadWritesAndVerifies: io_submit_mode=offload with psync at
// iodepth 8 writes every block once (serialize_overlap, random map) and
// reads them all back through the same pool with verify. (The real fio
// 3.33 hangs on this job here, with or without verify, so it is not run
// beside it; fio's own t0010 and t0013 cover offload on the null engine.)
func TestOffloadWritesAndVerifies(t *testing.T) {
	dir := t.TempDir()
	w, _, err := runArgs(t, dir, "--name=o", "--size=1m", "--bs=4k", "--rw=randwrite", "--io_submit_mode=offload",
		"--iodepth=8", "--serialize_overlap=1", "--verify=crc32c", "--do_verify=1", "--directory="+dir)
	if err != nil {
		t.Fatal(err)
	}
	st := totals(t, w)
	if st.dir[dirWrite].ios != 256 || st.dir[dirRead].ios != 256 {
		t.Errorf("offload wrote/read %d/%d blocks; want 256/256", st.dir[dirWrite].ios, st.dir[dirRead].ios)
	}
	if st.level[levelIndex(8)] == 0 {
		t.Errorf("offload never had 8 requests in flight: levels %v", st.level)
	}
}
