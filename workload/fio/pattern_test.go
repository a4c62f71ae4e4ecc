package fio

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// TestParsePattern: fio's pattern syntax, with the examples of fio's
// lib/pattern.c documentation worked out by hand.
func TestParsePattern(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []byte
		offs []uint32
		err  string
	}{
		{in: `"abcd"`, want: []byte("abcd")},
		{in: `-1024`, want: []byte{0x00, 0xfc, 0xff, 0xff}},
		{in: `66`, want: []byte{0x42}},
		{in: `0`, want: []byte{0}},
		{in: `0xFF0X1`, want: []byte{0xff, 0x01}},
		{in: `0xaaa`, want: []byte{0x0a, 0xaa}},
		{in: `%o`, want: make([]byte, 8), offs: []uint32{0}},
		{in: `"123"0xFFeeCC`, want: []byte{'1', '2', '3', 0xff, 0xee, 0xcc}},
		{in: `-100xab"1"%o"2"`, want: []byte{0xf6, 0xff, 0xff, 0xff, 0xab, '1', 0, 0, 0, 0, 0, 0, 0, 0, '2'}, offs: []uint32{6}},
		{in: `%o0xdeadbeef%o`, want: append(append(make([]byte, 8), 0xde, 0xad, 0xbe, 0xef), make([]byte, 8)...), offs: []uint32{0, 12}},
		{in: `"abc`, err: "unterminated"},
		{in: `xyz`, err: "want a"},
		{in: `%x`, err: "unknown format"},
		{in: `4294967296`, err: "want a"},
		{in: "0x" + strings.Repeat("ab", 513), err: "longer than 512"},
	} {
		got, offs, err := parsePattern(tc.in, true)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v; want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, tc.want) || len(offs) != len(tc.offs) {
			t.Errorf("%s = % x %v, %v; want % x %v", tc.in, got, offs, err, tc.want, tc.offs)
			continue
		}
		for i := range offs {
			if offs[i] != tc.offs[i] {
				t.Errorf("%s: %%o at %v; want %v", tc.in, offs, tc.offs)
			}
		}
	}
	if _, _, err := parsePattern("%o", false); err == nil {
		t.Errorf("buffer_pattern=%%o accepted; fio takes no formats there")
	}
}

// TestPatternFilesMatchFio: the same job with verify_pattern (with %o)
// and verify=pattern, and with buffer_pattern, leaves byte-identical
// files here and under the real fio 3.33, and the same reads and writes.
func TestPatternFilesMatchFio(t *testing.T) {
	fio := fioPath(t)
	for _, tc := range [][]string{
		{"--rw=write", "--bs=4k", "--verify=pattern", `--verify_pattern=0xdeadbeef%o"ab"-3`},
		{"--rw=randwrite", "--bs=8k", "--verify=pattern", `--verify_pattern="wp"%o`, "--verify_interval=4k"},
		{"--rw=write", "--bs=4k", "--buffer_pattern=0x0102030405"},
		{"--rw=write", "--bs=4k", `--buffer_pattern="xyz"`, "--buffer_compress_percentage=50", "--buffer_compress_chunk=4k"},
	} {
		args := append([]string{"--name=p", "--filename=f", "--size=256k"}, tc...)
		theirs, ours, fioDir, ourDir := runBoth(t, fio, args...)
		if theirs != ours {
			t.Errorf("%v: counts %+v; fio's %+v", tc, ours, theirs)
		}
		a, errA := os.ReadFile(filepath.Join(fioDir, "f"))
		b, errB := os.ReadFile(filepath.Join(ourDir, "f"))
		if errA != nil || errB != nil {
			t.Fatalf("%v: %v, %v", tc, errA, errB)
		}
		if strings.Contains(strings.Join(tc, " "), "compress") {
			// the random part differs (fio's generator is not ours):
			// the pattern part must be fio's
			chunk := 4096 / 2
			if !bytes.Equal(a[chunk:2*chunk], b[chunk:2*chunk]) {
				t.Errorf("%v: compressible half % x; fio's % x", tc, b[chunk:chunk+16], a[chunk:chunk+16])
			}
			continue
		}
		if !bytes.Equal(a, b) {
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			t.Errorf("%v: files differ from byte %d (%d and %d bytes)", tc, i, len(b), len(a))
		}
	}
}

// TestPatternVerifyCatchesChanges: a file fio wrote with a %o pattern
// verifies here, block for block; a changed byte fails with EILSEQ
// naming its offset, as fio's verify fails, and fio agrees.
func TestPatternVerifyCatchesChanges(t *testing.T) {
	fio := fioPath(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	pat := `--verify_pattern=%o"wp"`
	// verify=pattern: the headerless kind, so the file is fio's and ours
	// alike (fio's headers are not a format writepath reads)
	w := exec.Command(fio, "--name=w", "--filename="+f, "--rw=write", "--bs=4k", "--size=64k", "--verify=pattern", pat, "--do_verify=0")
	w.Dir = dir // fio leaves its verify state file in its directory
	if out, err := w.CombinedOutput(); err != nil {
		t.Fatalf("fio write: %v\n%s", err, out)
	}
	read := []string{"--name=r", "--filename=" + f, "--rw=read", "--bs=4k", "--size=64k", "--verify=pattern", pat, "--verify_fatal=1"}
	if _, _, err := runArgs(t, dir, read...); err != nil {
		t.Fatalf("fio's pattern file read back here: %v", err)
	}
	fd, err := os.OpenFile(f, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fd.WriteAt([]byte{'X'}, 5*4096+100); err != nil {
		t.Fatal(err)
	}
	fd.Close()
	_, _, err = runArgs(t, dir, read...)
	if !errors.Is(err, unix.EILSEQ) || !strings.Contains(err.Error(), "offset 20580") {
		t.Errorf("changed byte: %v; want EILSEQ at offset 20580", err)
	}
	r := exec.Command(fio, read...)
	r.Dir = dir
	if r.Run() == nil {
		t.Error("fio read the changed file without a verify error")
	}
}

// TestVerifyPatternAloneChecksHeaderAndPattern: verify_pattern= without
// verify= checks a header and then the pattern (fio's VERIFY_PATTERN),
// with verify= given it keeps that kind, and t0006's shape (meta with a
// pattern, verify_backlog) writes, reads back and verifies as fio does.
func TestVerifyPatternAloneChecksHeaderAndPattern(t *testing.T) {
	spec, err := ParseArgs([]string{"--name=x", "--size=1m", "--verify_pattern=0xaaa"})
	if err != nil {
		t.Fatal(err)
	}
	if j := spec.Jobs[0]; j.Verify != fiov1.Verify_VERIFY_META || !bytes.Equal(j.VerifyPattern, []byte{0x0a, 0xaa}) {
		t.Errorf("verify_pattern alone: verify %v pattern % x; want meta (header + pattern) and 0a aa", j.Verify, j.VerifyPattern)
	}
	spec, _ = ParseArgs([]string{"--name=x", "--size=1m", "--verify=0", "--verify_pattern=0xaaa"})
	if j := spec.Jobs[0]; j.Verify != fiov1.Verify_VERIFY_NONE {
		t.Errorf("verify=0 then verify_pattern: verify %v; want none kept", j.Verify)
	}
	fio := fioPath(t)
	dir := diskDir(t)
	theirs, ours, _, _ := runBoth(t, fio, "--name=v", "--rw=randrw", "--bs=4k", "--direct=1", "--ioengine=libaio", "--iodepth=8",
		"--verify=meta", "--verify_backlog=64", "--verify_fatal=1", "--size=4m", "--verify_pattern=0xaaa", "--filename="+filepath.Join(dir, "v"))
	if ours.Error != 0 || theirs.Error != 0 || ours.Write.IOs == 0 || ours.Read.IOs <= ours.Write.IOs {
		t.Errorf("t0006's shape: %+v; fio's %+v (no error, every write read back)", ours, theirs)
	}
}
