package fio

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestStridedZonesMatchFio: zonemode=strided (zonesize, zonerange,
// zoneskip, with offset=) puts the I/O where the real fio 3.33 does, as
// both tools' write_iolog shows: sequential jobs the same offsets in the
// same order; random ones the same blocks in each run of a zone (the
// order within a zone is each tool's random generator's).
func TestStridedZonesMatchFio(t *testing.T) {
	dir := t.TempDir()
	offsets := func(t *testing.T, log string) []uint64 {
		t.Helper()
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			// version 3: time, file, action, offset, length
			if len(f) == 5 && (f[2] == "read" || f[2] == "write") {
				n, err := strconv.ParseUint(f[3], 10, 64)
				if err != nil {
					t.Fatalf("iolog line %q: %v", l, err)
				}
				out = append(out, n)
			}
		}
		return out
	}
	for _, tt := range []struct {
		name string
		args []string
		run  int // I/Os per zone visit whose order is random (0: sequential)
	}{
		{"seq-skip", []string{"--rw=write", "--zonesize=8k", "--zonerange=16k", "--zoneskip=16k"}, 0},
		{"seq-size-over-range", []string{"--rw=read", "--zonesize=32k", "--zonerange=16k"}, 0},
		{"seq-offset", []string{"--rw=write", "--zonesize=8k", "--zoneskip=24k", "--offset=8k"}, 0},
		{"rand-skip", []string{"--rw=randwrite", "--zonesize=16k", "--zonerange=16k", "--zoneskip=16k"}, 4},
		{"rand-size-over-range", []string{"--rw=randread", "--zonesize=32k", "--zonerange=16k", "--zoneskip=16k"}, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := func(tool string, do func(args []string) error) []uint64 {
				log := filepath.Join(dir, tt.name+"-"+tool+".log")
				args := append([]string{"--name=z", "--bs=4k", "--size=128k", "--zonemode=strided",
					"--filename=" + filepath.Join(dir, tt.name+"-"+tool), "--write_iolog=" + log}, tt.args...)
				if err := do(args); err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				return offsets(t, log)
			}
			want := run("fio", func(args []string) error { _, err := runFio(t, args...); return err })
			got := run("writepath", func(args []string) error {
				var out, errOut bytes.Buffer
				return RunCommand(context.Background(), args, &out, &errOut, "t")
			})
			if tt.run > 0 {
				for _, o := range [][]uint64{want, got} {
					for i := 0; i < len(o); i += tt.run {
						slices.Sort(o[i:min(i+tt.run, len(o))])
					}
				}
			}
			if !slices.Equal(got, want) || len(got) != 32 {
				t.Errorf("offsets\nwritepath %v\nfio 3.33  %v", got, want)
			}
		})
	}
}
