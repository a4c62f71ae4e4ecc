package fio

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestUringWritesLandInTheFile: an io_uring random-write job over a new
// (fallocated, zero) file writes every block with the job's buffers.
func TestUringWritesLandInTheFile(t *testing.T) {
	dir := diskDir(t)
	if _, _, err := runArgs(t, dir, "--name=u", "--size=1m", "--bs=4k", "--direct=1",
		"--ioengine=io_uring", "--iodepth=16", "--rw=randwrite"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "u.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 4096)
	for off := 0; off < len(data); off += 4096 {
		if bytes.Equal(data[off:off+4096], zero) {
			t.Fatalf("block at %d is still zero: the write did not land", off)
		}
	}
}

// TestUringSyncsAsFioQueuesThem runs the same io_uring fsync=4 job with
// fio 3.33 and with writepath. fio queues a sync in the ring beside the
// writes and, until one completes, another after the same write, so both
// issue far more than the one per 4 writes of the sync engines and libaio
// (fio gave 171-210 syncs for 256 writes here).
func TestUringSyncsAsFioQueuesThem(t *testing.T) {
	dir := diskDir(t)
	job := []string{"--name=s", "--size=1m", "--bs=4k", "--direct=1", "--ioengine=io_uring", "--iodepth=8",
		"--rw=randwrite", "--fsync=4"}
	out, err := exec.Command("fio", append(job, "--output-format=json", "--directory="+dir)...).Output()
	if err != nil {
		t.Fatalf("fio: %v", err)
	}
	var rep struct {
		Jobs []struct {
			Write struct {
				TotalIOs int64 `json:"total_ios"`
			} `json:"write"`
			Sync struct {
				TotalIOs int64 `json:"total_ios"`
			} `json:"sync"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Jobs) != 1 {
		t.Fatalf("fio JSON: %v", err)
	}
	fioWrites, fioSyncs := rep.Jobs[0].Write.TotalIOs, rep.Jobs[0].Sync.TotalIOs
	w, _, err := runArgs(t, dir, job...)
	if err != nil {
		t.Fatal(err)
	}
	st := totals(t, w)
	t.Logf("256 writes, fsync=4, iodepth 8: fio %d writes %d syncs; writepath %d writes %d syncs",
		fioWrites, fioSyncs, st.dir[dirWrite].ios, st.syncIOs)
	for _, r := range []struct {
		who           string
		writes, syncs int64
	}{{"fio", fioWrites, fioSyncs}, {"writepath", st.dir[dirWrite].ios, st.syncIOs}} {
		if r.writes != 256 || r.syncs <= 63+16 || r.syncs > 8*256 {
			t.Errorf("%s: %d writes, %d syncs; want 256 writes and syncs queued as fio's io_uring does (well over 63)", r.who, r.writes, r.syncs)
		}
	}
}
