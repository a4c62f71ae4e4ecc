package fio

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReplayMatchesFio: a version 3 log the real fio 3.33 wrote
// (write_iolog of a randrw job with fsync=) replays here as under fio:
// the same reads, writes and syncs, and a hand-written log's waits take
// as long in both (fio's rule: no wait while the log's time is 0), also
// scaled by replay_time_scale.
func TestReplayMatchesFio(t *testing.T) {
	fio := fioPath(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.log")
	data := filepath.Join(dir, "data")
	w := exec.Command(fio, "--name=w", "--filename="+data, "--rw=randrw", "--bs=4k", "--size=512k", "--fsync=7", "--write_iolog="+src)
	if out, err := w.CombinedOutput(); err != nil {
		t.Fatalf("fio write_iolog: %v\n%s", err, out)
	}
	theirs, ours, _, _ := runBoth(t, fio, "--name=r", "--read_iolog="+src, "--replay_no_stall=1")
	if theirs != ours || ours.Read.IOs == 0 || ours.Write.IOs == 0 {
		t.Errorf("replay of fio's log: %+v; fio's %+v", ours, theirs)
	}
	timed := filepath.Join(dir, "t3.log")
	log := "fio version 3 iolog\n0 " + data + " add\n0 " + data + " open\n0 " + data + " write 0 4096\n" +
		"100000 " + data + " write 4096 4096\n300000 " + data + " read 0 4096\n300000 " + data + " close\n"
	if err := os.WriteFile(timed, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		scale string
		ms    int64
	}{{"100", 200}, {"200", 100}} {
		theirs, ours := runtimes(t, fio, "--name=r", "--read_iolog="+timed, "--replay_time_scale="+tc.scale)
		t.Logf("replay_time_scale=%s: %d ms here, fio %d ms", tc.scale, ours, theirs)
		// a loaded host oversleeps: the floor is exact, the ceiling loose
		if ours < tc.ms || ours > tc.ms*3 {
			t.Errorf("replay_time_scale=%s took %d ms; want %d as fio (fio took %d)", tc.scale, ours, tc.ms, theirs)
		}
	}
}

// runtimes is job_runtime (ms) of the first job under fio and here.
func runtimes(t *testing.T, fio string, args ...string) (theirs, ours int64) {
	t.Helper()
	out, err := exec.Command(fio, append(args, "--output-format=json")...).Output()
	if err != nil {
		t.Fatalf("fio %v: %v", args, err)
	}
	theirs = jsonRuntime(t, out)
	var b, e strings.Builder
	if err := RunCommand(t.Context(), append(args, "--output-format=json"), &b, &e, "t"); err != nil {
		t.Fatalf("%v: %v %s", args, err, e.String())
	}
	return theirs, jsonRuntime(t, []byte(b.String()))
}

// TestReadIologRefusesBadLogs: what is not a replayable log is one error
// naming the file and line.
func TestReadIologRefusesBadLogs(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ log, want string }{
		{"rw 0 4096\n", "is not a fio version 2 or 3 iolog header"},
		{"fio version 2 iolog\nf add\nf read x 4096\n", ":3: offset \"x\""},
		{"fio version 2 iolog\nf add\ng add\n", "names f and g"},
		{"fio version 2 iolog\nf add\nf trim 0 4096\n", "trims are not replayed"},
		{"fio version 3 iolog\n1 f add\n2 f jump 0 1\n", "bad iolog action \"jump\""},
		{"fio version 2 iolog\nf add\n", "no I/O to replay"},
	} {
		p := filepath.Join(dir, "l")
		if err := os.WriteFile(p, []byte(tc.log), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ParseArgs([]string{"--name=r", "--read_iolog=" + p})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: %v; want %q naming %s", tc.log, err, tc.want, p)
		}
	}
}

func jsonRuntime(t *testing.T, out []byte) int64 {
	t.Helper()
	var doc struct {
		Jobs []struct {
			Runtime int64 `json:"job_runtime"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Jobs) == 0 {
		t.Fatalf("JSON: %v\n%.300s", err, out)
	}
	return doc.Jobs[0].Runtime
}

// TestReplayVersion2MatchesFio: a version 2 log (no times; datasync and
// sync lines) replays with fio's counts.
func TestReplayVersion2MatchesFio(t *testing.T) {
	fio := fioPath(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "d")
	if err := os.WriteFile(data, make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	log := "fio version 2 iolog\n" + data + " add\n" + data + " open\n"
	for i := 0; i < 16; i++ {
		log += data + " write " + strconv.Itoa(i*4096) + " 4096\n"
		if i%4 == 3 {
			log += data + " datasync 0 0\n"
		}
		log += data + " read " + strconv.Itoa((15-i)*4096) + " 4096\n"
	}
	log += data + " sync 0 0\n" + data + " close\n"
	p := filepath.Join(dir, "v2.log")
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	theirs, ours, _, _ := runBoth(t, fio, "--name=r", "--read_iolog="+p)
	if theirs != ours || ours.Read.IOs != 16 || ours.Write.IOs != 16 {
		t.Errorf("v2 replay: %+v; fio's %+v (16 reads, 16 writes)", ours, theirs)
	}
}
