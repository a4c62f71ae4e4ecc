package fio

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizeFromExistingFiles: a job without size= runs on its existing
// default-named files with their sizes, as the real fio 3.33 does (the
// same bytes read), and without them fails as fio does, with fio's line.
func TestSizeFromExistingFiles(t *testing.T) {
	fio := fioPath(t)
	tests := []struct {
		name  string
		files []int64 // -1: absent
		args  []string
	}{
		{"one file", []int64{256 << 10}, nil},
		{"two files", []int64{256 << 10, 128 << 10}, []string{"--nrfiles=2"}},
		{"absent", []int64{-1}, nil},
		{"empty", []int64{0}, nil},
		{"one of two absent", []int64{256 << 10, -1}, []string{"--nrfiles=2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, n := range tt.files {
				if n < 0 {
					continue
				}
				if err := os.WriteFile(filepath.Join(dir, "j.0."+string(rune('0'+i))), make([]byte, n), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"--name=j", "--rw=read", "--bs=4k", "--directory=" + dir, "--minimal"}, tt.args...)
			cmd := exec.Command(fio, args...)
			var fioErr bytes.Buffer
			cmd.Stderr = &fioErr
			fioOut, fioRunErr := cmd.Output()
			var out, errOut bytes.Buffer
			err := RunCommand(context.Background(), args, &out, &errOut, "t")
			if fioRunErr != nil && strings.Contains(fioErr.String()+string(fioOut), "err=2/file") {
				// an absent file beside existing ones: fio runs on those and
				// fails opening it; writepath refuses before starting
				if err == nil || !strings.Contains(err.Error(), "file 1 does not exist") {
					t.Errorf("writepath: %v; fio fails opening the absent file", err)
				}
				return
			}
			if fioRunErr != nil {
				const line = "j: you need to specify size="
				if !strings.Contains(fioErr.String(), line) {
					t.Fatalf("fio failed otherwise: %v: %s", fioRunErr, fioErr.String())
				}
				if err == nil || !strings.HasPrefix(err.Error(), line) {
					t.Errorf("writepath: %v; fio fails with %q", err, line)
				}
				return
			}
			if err != nil {
				t.Fatalf("writepath: %v; fio ran", err)
			}
			// terse v3 field 6: read KiB
			kib := func(s string) string { return strings.Split(s, ";")[5] }
			if g, w := kib(out.String()), kib(string(fioOut)); g != w {
				t.Errorf("read %s KiB; fio %s KiB", g, w)
			}
		})
	}
}
