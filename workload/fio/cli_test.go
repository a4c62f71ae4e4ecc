package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/writepath/writepath/internal/testenv"
	fiov1 "github.com/writepath/writepath/proto/writepath/fio/v1"
)

// writeFile writes a job file into dir and returns its path.
func writeJob(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestJobFileSyntax(t *testing.T) {
	dir := t.TempDir()
	writeJob(t, dir, "common.inc", "ioengine=null ; included options\nbs=8k\n")
	path := writeJob(t, dir, "j.fio", `[global]
include common.inc
size=(2*1024*1024)   ; inline comment after a value
[a]
rw=randread # hash comment too
iodepth=$ncpus
[b]
size=$pagesize*4
stonewall
`)
	spec, err := ParseArgs([]string{path})
	if err != nil {
		t.Fatalf("ParseArgs(%s) = %v", path, err)
	}
	a, b := spec.Jobs[0], spec.Jobs[1]
	if a.Ioengine != fiov1.IOEngine_IO_ENGINE_NULL || a.Bs != 8192 || a.Size != 2<<20 || a.Rw != fiov1.ReadWrite_READ_WRITE_RANDREAD {
		t.Errorf("job a = %v", a)
	}
	if ncpus, _ := strconv.Atoi(keywordValue("$ncpus")); a.Iodepth != uint32(ncpus) {
		t.Errorf("iodepth=$ncpus gave %d; want %d", a.Iodepth, ncpus)
	}
	if b.Size != uint64(4*os.Getpagesize()) || !b.Stonewall || b.Group != 1 || a.Group != 0 {
		t.Errorf("job b size=%d stonewall=%v group=%d (a group %d)", b.Size, b.Stonewall, b.Group, a.Group)
	}
	// --section keeps [global] and the named jobs only.
	spec, err = ParseArgs([]string{"--section=b", path})
	if err != nil || len(spec.Jobs) != 1 || spec.Jobs[0].Name != "b" || spec.Jobs[0].Ioengine != fiov1.IOEngine_IO_ENGINE_NULL {
		t.Errorf("--section=b: %v, %v", spec, err)
	}
	// A second job file starts with a stonewall, as in fio.
	second := writeJob(t, dir, "k.fio", "[c]\nioengine=null\nsize=1m\n")
	spec, err = ParseArgs([]string{path, second})
	if err != nil || !spec.Jobs[2].Stonewall || spec.Jobs[2].Group != 2 {
		t.Errorf("two job files: %v, %v", spec, err)
	}
}

func keywordValue(k string) string {
	for _, kw := range keywords() {
		if kw[0] == k {
			return kw[1]
		}
	}
	return ""
}

func TestJobFileSyntaxErrors(t *testing.T) {
	dir := t.TempDir()
	writeJob(t, dir, "bad.inc", "[nested]\nbs=4k\n")
	self := writeJob(t, dir, "self.inc", "include self.inc\n")
	_ = self
	for _, tt := range []struct{ text, want string }{
		{"[a]\ninclude bad.inc\n", "no new sections in included files"},
		{"[a]\ninclude self.inc\n", "nested includes"},
		{"[a]\ninclude missing.inc\n", "include missing.inc"},
		{"[a]\nsize=(1+\n", "size=(1+"},
		{"[a]\nsize=(4/0)\n", "division by zero"},
	} {
		p := writeJob(t, dir, "e.fio", tt.text)
		if _, err := ParseArgs([]string{p}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("job file %q: err = %v; want %q", tt.text, err, tt.want)
		}
	}
}

func TestArithmeticAndUnits(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want uint64
	}{
		{"(1024*1024)", 1 << 20}, {"(1024*1k)", 1 << 20}, {"(2^10)", 1024}, {"(10-2)*512", 4096},
		{"(7%4)", 3}, {"4k", 4096}, {"0x1000", 4096},
	} {
		if got, err := parseSize(tt.v); err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tt.v, got, err, tt.want)
		}
	}
	if d, err := parseTime("(1000*1000)"); err != nil || d.Seconds() != 1 {
		t.Errorf("parseTime((1000*1000)) = %v, %v; want 1s (expression numbers are µs, as fio's HOWTO says)", d, err)
	}
}

// TestBareArithmeticIsFiosReading: fio 3.33 evaluates arithmetic only in
// parentheses or with a reserved word (size=1024*1024 does 1024 bytes of
// I/O in fio), so a bare expression is refused when the job is to run,
// naming fio's reading, and accepted by --parse-only as fio's is.
func TestBareArithmeticIsFiosReading(t *testing.T) {
	for _, tt := range []struct {
		v, reads string
		parse    func(string) error
	}{
		{"1024*1024", "as 1024:", func(v string) error { _, err := parseSize(v); return err }},
		{"4k*2", "as 4096:", func(v string) error { _, err := parseSize(v); return err }},
		{"10*2", "as 10s:", func(v string) error { _, err := parseTime(v); return err }},
		{"2*8", "as 2:", func(v string) error { _, err := parseUint(v, 0, 100); return err }},
	} {
		err := tt.parse(tt.v)
		var rr runRefusal
		if !errors.As(err, &rr) || !strings.Contains(err.Error(), tt.reads) || !strings.Contains(err.Error(), "("+tt.v+")") {
			t.Errorf("%q: %v; want a refusal at run naming fio's reading %q and (%s)", tt.v, err, tt.reads, tt.v)
		}
	}
	if _, err := ParseCommand([]string{"--parse-only", "--name=a", "--size=1024*1024"}); err != nil {
		t.Errorf("--parse-only refused size=1024*1024, which fio's accepts: %v", err)
	}
	_, err := ParseArgs([]string{"--name=a", "--ioengine=null", "--size=1024*1024"})
	if err == nil || !strings.Contains(err.Error(), "only in parentheses") {
		t.Errorf("size=1024*1024 to run: %v; want the refusal naming fio's reading", err)
	}
}

func TestCommandActions(t *testing.T) {
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := RunCommand(context.Background(), args, &out, &errOut, "9.9"); err != nil {
			t.Fatalf("RunCommand(%q) = %v", args, err)
		}
		if errOut.Len() > 0 {
			t.Errorf("RunCommand(%q) wrote to stderr: %q", args, errOut.String())
		}
		return out.String()
	}
	if v := run("--version"); v != "fio-3.33 (writepath 9.9)\n" {
		t.Errorf("--version = %q", v)
	}
	if h := run("--cmdhelp=bs"); !strings.Contains(h, "bs: Block size unit") || !strings.Contains(h, "blocksize") {
		t.Errorf("--cmdhelp=bs = %q", h)
	}
	if h := run("--help"); !strings.HasPrefix(h, "fio-3.33") || !strings.Contains(h, "--showcmd") {
		t.Errorf("--help = %q", h)
	}
	dir := t.TempDir()
	p := writeJob(t, dir, "s.fio", "[global]\nbs=4k\n[a]\nsize=1m\ntime_based\n")
	if s := run("--showcmd", p); s != "fio --bs=4k --name=a --size=1m --time_based \n" {
		t.Errorf("--showcmd = %q", s)
	}
	if s := run("--enghelp"); !strings.Contains(s, "\tlibaio\n") || !strings.Contains(s, "\tnull\n") {
		t.Errorf("--enghelp = %q", s)
	}
	run("--parse-only", "--name=x", "--size=1m")
}

func TestOutputFormatList(t *testing.T) {
	spec, err := ParseArgs([]string{"--output-format=normal,json,terse", "--name=x", "--size=1m"})
	if err != nil {
		t.Fatal(err)
	}
	want := []fiov1.OutputFormat{fiov1.OutputFormat_OUTPUT_FORMAT_TERSE, fiov1.OutputFormat_OUTPUT_FORMAT_JSON, fiov1.OutputFormat_OUTPUT_FORMAT_NORMAL}
	if len(spec.OutputFormats) != 3 || spec.OutputFormats[0] != want[0] || spec.OutputFormats[1] != want[1] || spec.OutputFormats[2] != want[2] {
		t.Errorf("formats = %v; want fio's order %v", spec.OutputFormats, want)
	}
	spec, _ = ParseArgs([]string{"--output-format=json,json+", "--name=x", "--size=1m"})
	if len(spec.OutputFormats) != 1 || spec.OutputFormats[0] != fiov1.OutputFormat_OUTPUT_FORMAT_JSON_PLUS {
		t.Errorf("json,json+ = %v; want json+ once", spec.OutputFormats)
	}
}

// fioPath is the real fio 3.33 that peers are measured against.
func fioPath(t *testing.T) string {
	t.Helper()
	p := testenv.Fio(t)
	out, err := exec.Command(p, "--version").Output()
	if err == nil && !strings.HasPrefix(string(out), "fio-3.33") {
		err = fmt.Errorf("%s is %q", p, bytes.TrimSpace(out))
	}
	testenv.Need(t, "fio 3.33 (the peer)", err)
	return p
}

// TestTerseFieldsMatchFio: the same null-engine job in terse versions 2..5
// gives as many fields, with the same fixed ones, as the real fio.
func TestTerseFieldsMatchFio(t *testing.T) {
	fio := fioPath(t)
	for _, ver := range []string{"2", "3", "4", "5"} {
		args := []string{"--name=x", "--ioengine=null", "--size=1m", "--minimal", "--terse-version=" + ver}
		want, err := exec.Command(fio, args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := RunCommand(context.Background(), args, &got, os.Stderr, "t"); err != nil {
			t.Fatal(err)
		}
		w, g := strings.Split(strings.TrimSpace(string(want)), ";"), strings.Split(strings.TrimSpace(got.String()), ";")
		if len(w) != len(g) {
			t.Errorf("terse v%s: %d fields; fio gives %d\nfio: %s\nours: %s", ver, len(g), len(w), want, got.String())
			continue
		}
		if g[0] != w[0] || (ver != "2" && !strings.HasPrefix(g[1], w[1])) {
			t.Errorf("terse v%s starts %q;%q, fio %q;%q", ver, g[0], g[1], w[0], w[1])
		}
		// io_kbytes of the read direction: 1m of reads.
		kb := 5
		if ver == "2" {
			kb = 3
		}
		if g[kb] != w[kb] {
			t.Errorf("terse v%s read io_kbytes = %s; fio %s", ver, g[kb], w[kb])
		}
	}
}

// TestCmdHelpDefaultsMatchFio: `--cmdhelp=OPT` prints the option's default
// line as the real fio does (and "no default" where it has none).
func TestCmdHelpDefaultsMatchFio(t *testing.T) {
	fio := fioPath(t)
	defaultLine := func(help string) string {
		for _, l := range strings.Split(help, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "default:") {
				return strings.TrimSpace(l)
			}
		}
		return ""
	}
	for _, opt := range []string{"bs", "rw", "iodepth", "fsync", "ioengine", "size", "direct", "numjobs", "runtime", "rwmixread"} {
		want, err := exec.Command(fio, "--cmdhelp="+opt).Output()
		if err != nil {
			t.Fatal(err)
		}
		var got, errOut bytes.Buffer
		if err := RunCommand(context.Background(), []string{"--cmdhelp=" + opt}, &got, &errOut, "t"); err != nil {
			t.Fatal(err)
		}
		if g, w := defaultLine(got.String()), defaultLine(string(want)); g != w || g == "" {
			t.Errorf("--cmdhelp=%s default line %q; fio's %q", opt, g, w)
		}
	}
}

// TestHeaderBeforeTheJobs: the normal output's header (the jobs' lines,
// the version, "Starting N process", the layout's line) goes out as the
// jobs start, as fio prints it: before the ETA lines and, with
// --output-format=normal,json, before the JSON document, in the same
// order of lines as fio 3.33.
func TestHeaderBeforeTheJobs(t *testing.T) {
	fio := fioPath(t)
	dir := t.TempDir()
	marks := regexp.MustCompile(`^(\{|\S+: \(g=\d+\)|fio-3\.33|Starting \d|\S+: Laying out|\S+: \(groupid=|Run status group)`)
	order := func(out string) []string {
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if m := marks.FindString(l); m != "" {
				got = append(got, m)
			}
		}
		return got
	}
	for i, format := range []string{"normal,json", "normal"} {
		args := func(who string) []string {
			return []string{"--name=x", "--rw=write", "--bs=4k", "--size=256k", "--ioengine=psync",
				"--filename=" + filepath.Join(dir, fmt.Sprintf("%s%d", who, i)), "--output-format=" + format}
		}
		want, err := exec.Command(fio, args("fio")...).Output()
		if err != nil {
			t.Fatal(err)
		}
		var got, errb bytes.Buffer
		if err := RunCommand(t.Context(), args("wp"), &got, &errb, "t"); err != nil || errb.Len() > 0 {
			t.Fatalf("%s: %v, stderr %q", format, err, errb.String())
		}
		if w, g := order(string(want)), order(got.String()); strings.Join(w, "|") != strings.Join(g, "|") {
			t.Errorf("%s: lines in the order %q; fio's %q", format, g, w)
		}
	}
	// The ETA lines come after the header.
	var got bytes.Buffer
	args := []string{"--name=x", "--rw=write", "--bs=4k", "--size=256k", "--ioengine=psync", "--time_based", "--runtime=1",
		"--filename=" + filepath.Join(dir, "eta"), "--eta=always", "--eta-newline=1"}
	if err := RunCommand(t.Context(), args, &got, io.Discard, "t"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.String(), "x: (g=0): ") {
		t.Errorf("--eta=always: the output does not start with the header:\n%.300s", got.String())
	}
	// fio's ETA line follows "Starting 1 process" directly and ends with
	// the blank line before the report.
	eta := regexp.MustCompile(`\nStarting 1 process\n(x: Laying out[^\n]*\n)?Jobs: 1 \(f=1\): \[W\(1\)\]\[\d+\.\d%\]\[w=[^]]+\]\[w=[^]]+ IOPS\]\[eta \d\dm:\d\ds\]\s*\r`)
	if !eta.MatchString(got.String()) || !strings.Contains(got.String(), "\r\nx: (groupid=0") {
		t.Errorf("--eta=always: no fio ETA line between the header and the report:\n%q", got.String())
	}
}
