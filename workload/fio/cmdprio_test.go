package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// prioDoc is the part of fio's JSON the cmdprio test reads.
type prioDoc struct {
	Jobs []struct {
		Read struct {
			TotalIOs int64 `json:"total_ios"`
			Clat     struct {
				N int64 `json:"N"`
			} `json:"clat_ns"`
			Prios []struct {
				Class int `json:"prioclass"`
				Prio  int `json:"prio"`
				Clat  struct {
					N    int64   `json:"N"`
					Mean float64 `json:"mean"`
				} `json:"clat_ns"`
			} `json:"prios"`
		} `json:"read"`
	} `json:"jobs"`
}

// lastColumns is the set of values in a log's last column.
func lastColumns(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(l, ", ")
		set[f[len(f)-1]] = true
	}
	var out []string
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// TestCmdprioMatchesFio runs one libaio job with cmdprio_percentage (best
// effort class, so no privilege is needed) on the real fio 3.33 and here:
// both report the job's own priority and the cmdprio one apart, in the
// same shares, their samples adding up to the direction's, and log the
// same priority values with log_prio.
func TestCmdprioMatchesFio(t *testing.T) {
	fio := fioPath(t)
	dir := diskDir(t)
	args := []string{"--name=p", "--ioengine=libaio", "--iodepth=8", "--rw=randread", "--size=4m",
		"--cmdprio_percentage=30", "--cmdprio_class=2", "--cmdprio=5", "--write_lat_log=p", "--log_prio=1",
		"--output-format=json", "--filename=" + filepath.Join(dir, "pfile")}
	fioDir, ourDir := t.TempDir(), t.TempDir()
	cmd := exec.Command(fio, args...)
	cmd.Dir = fioDir
	fioOut, err := cmd.Output()
	if err != nil {
		t.Fatalf("fio: %v", err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(ourDir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errOut bytes.Buffer
	if err := RunCommand(context.Background(), args, &out, &errOut, "t"); err != nil || errOut.Len() > 0 {
		t.Fatalf("RunCommand = %v, stderr %q", err, errOut.String())
	}
	for who, b := range map[string][]byte{"fio": fioOut, "writepath": out.Bytes()} {
		var doc prioDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s JSON: %v", who, err)
		}
		r := doc.Jobs[0].Read
		if len(r.Prios) != 2 || r.Prios[0].Class != 0 || r.Prios[0].Prio != 0 || r.Prios[1].Class != 2 || r.Prios[1].Prio != 5 {
			t.Fatalf("%s: prios = %+v; want 0/0 and 2/5", who, r.Prios)
		}
		if n := r.Prios[0].Clat.N + r.Prios[1].Clat.N; n != r.Clat.N || n != r.TotalIOs {
			t.Errorf("%s: prio samples add to %d; clat N %d, total_ios %d", who, n, r.Clat.N, r.TotalIOs)
		}
		if share := float64(r.Prios[1].Clat.N) / float64(r.TotalIOs); share < 0.22 || share > 0.38 {
			t.Errorf("%s: %.2f of the I/Os carry cmdprio; want about 0.30", who, share)
		}
	}
	want := lastColumns(t, filepath.Join(fioDir, "p_clat.1.log"))
	if got := lastColumns(t, filepath.Join(ourDir, "p_clat.1.log")); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("log_prio column values %v; fio's %v", got, want)
	}
}

func TestCmdprioOptions(t *testing.T) {
	split, err := parseCmdprioSplit("64k/25/1/1:64k/75/3/2:1024k/0,4k/50")
	if err != nil {
		t.Fatal(err)
	}
	if len(split[0]) != 2 || split[0][0].ioprio != ioprioValue(1, 1) || split[0][1].ioprio != ioprioValue(3, 2) {
		t.Errorf("read split = %+v; want 64k at 1/1 and 3/2, the 0%% entry dropped", split[0])
	}
	if len(split[1]) != 1 || split[1][0].bs != 4096 || split[1][0].ioprio != 0xffff {
		t.Errorf("write split = %+v; want 4k/50 with the implicit priority", split[1])
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--name=j", "--size=1m", "--cmdprio_percentage=50"}, "options of the libaio and io_uring engines"},
		{[]string{"--name=j", "--size=1m", "--ioengine=libaio", "--cmdprio_percentage=50", "--cmdprio_bssplit=4k/10"}, "mutually exclusive"},
		{[]string{"--name=j", "--size=1m", "--ioengine=libaio", "--cmdprio_bssplit=4k/60:4k/50"}, "exceeds 100"},
		{[]string{"--name=j", "--size=1m", "--ioengine=libaio", "--cmdprio_class=4"}, "cmdprio_class"},
	} {
		_, err := ParseArgs(c.args)
		if err == nil || !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseArgs(%q) = %v; want %q", c.args, err, c.want)
		}
	}
	// Every I/O draws from the split of its own size.
	p, err := newCmdPrio(mustJob(t, "--name=j", "--size=1m", "--ioengine=libaio", "--rw=randrw",
		"--cmdprio_bssplit=4k/100/2/3:8k/0"), 1, func(int) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if v, _, ok := p.pick(dirRead, 4096); !ok || v != ioprioValue(2, 3) {
			t.Fatalf("4k I/O got %#x, %v; want 2/3 every time", v, ok)
		}
		if _, _, ok := p.pick(dirWrite, 8192); ok {
			t.Fatal("8k I/O got a cmdprio priority; its entry is 0%")
		}
	}
}

func mustJob(t *testing.T, args ...string) *fiov1.Job {
	t.Helper()
	spec, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	return spec.Jobs[0]
}

// TestJobPrioMatchesFio: prioclass= and prio= set the job's own I/O
// priority (ioprio_set on its thread), which is the one its I/Os without
// cmdprio carry: fio 3.33 and writepath report the same two priorities.
func TestJobPrioMatchesFio(t *testing.T) {
	fio := fioPath(t)
	dir := diskDir(t)
	args := []string{"--name=p", "--ioengine=libaio", "--iodepth=8", "--rw=randread", "--size=2m", "--prioclass=2",
		"--prio=6", "--cmdprio_percentage=30", "--output-format=json", "--filename=" + filepath.Join(dir, "pf")}
	fioOut, err := exec.Command(fio, args...).Output()
	if err != nil {
		t.Fatalf("fio: %v", err)
	}
	var out, errOut bytes.Buffer
	if err := RunCommand(context.Background(), args, &out, &errOut, "t"); err != nil {
		t.Fatal(err)
	}
	for who, b := range map[string][]byte{"fio": fioOut, "writepath": out.Bytes()} {
		var doc prioDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		p := doc.Jobs[0].Read.Prios
		if len(p) != 2 || p[0].Class != 2 || p[0].Prio != 6 || p[1].Class != 1 || p[1].Prio != 0 {
			t.Errorf("%s: prios %+v; want 2/6 (the job's) and 1/0 (cmdprio's)", who, p)
		}
	}
}
