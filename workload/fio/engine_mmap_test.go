package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestMmapMatchesFio: ioengine=mmap jobs give the real fio 3.33's counts
// on the same job: reads and writes (the same random mix, from the same
// seeds), bytes, and the syncs fsync= issues as msync; a block size below
// a page with direct= fails in both.
func TestMmapMatchesFio(t *testing.T) {
	dir := diskDir(t)
	type counts struct{ reads, readBytes, writes, writeBytes, syncs int64 }
	read := func(t *testing.T, out []byte) counts {
		t.Helper()
		type dirStats struct {
			TotalIOs int64 `json:"total_ios"`
			IOBytes  int64 `json:"io_bytes"`
		}
		var doc struct {
			Jobs []struct {
				Read, Write, Sync dirStats
			} `json:"jobs"`
		}
		if err := json.Unmarshal(out, &doc); err != nil || len(doc.Jobs) != 1 {
			t.Fatalf("JSON: %v (%d jobs) %s", err, len(doc.Jobs), out)
		}
		j := doc.Jobs[0]
		return counts{j.Read.TotalIOs, j.Read.IOBytes, j.Write.TotalIOs, j.Write.IOBytes, j.Sync.TotalIOs}
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"randwrite-fsync", []string{"--rw=randwrite", "--fsync=16"}},
		{"randrw-direct", []string{"--rw=randrw", "--rwmixread=70", "--direct=1"}},
		{"read", []string{"--rw=read"}},
		{"write-fdatasync-end_fsync", []string{"--rw=write", "--fdatasync=8", "--end_fsync=1"}},
		{"offset", []string{"--rw=randread", "--offset=4097", "--bs=1k", "--size=1m"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, tt.name)
			args := append([]string{"--name=m", "--ioengine=mmap", "--bs=4k", "--size=4m", "--filename=" + file}, tt.args...)
			out, err := runFio(t, append(args, "--output-format=json")...)
			if err != nil {
				t.Fatalf("fio: %v", err)
			}
			want := read(t, out)
			var got, errOut bytes.Buffer
			if err := RunCommand(context.Background(), append(args, "--output-format=json"), &got, &errOut, "t"); err != nil {
				t.Fatalf("writepath: %v %s", err, errOut.String())
			}
			if g := read(t, got.Bytes()); g != want || g.reads+g.writes == 0 {
				t.Errorf("writepath %+v; fio 3.33 %+v", g, want)
			}
		})
	}
	args := []string{"--name=m", "--ioengine=mmap", "--bs=512", "--direct=1", "--size=1m", "--filename=" + filepath.Join(dir, "small")}
	if _, err := runFio(t, args...); err == nil {
		t.Error("fio ran mmap with bs=512 direct=1; the test expects its init to fail")
	}
	var got, errOut bytes.Buffer
	if err := RunCommand(context.Background(), args, &got, &errOut, "t"); err == nil || !strings.Contains(err.Error(), "minimum block size of") {
		t.Errorf("writepath mmap bs=512 direct=1 = %v; want fio's minimum block size error", err)
	}
}

// TestMmapWritesLand: what a mmap job writes is in the file when it ends
// (read back with pread), as verify would see it.
func TestMmapWritesLand(t *testing.T) {
	dir := diskDir(t)
	w, _, err := runArgs(t, dir, "--name=m", "--ioengine=mmap", "--rw=write", "--bs=4k", "--size=64k", "--verify=crc32c", "--do_verify=1")
	if err != nil {
		t.Fatal(err)
	}
	if st := totals(t, w); st.dir[dirWrite].ios != 16 {
		t.Errorf("%d writes; want 16", st.dir[dirWrite].ios)
	}
}
