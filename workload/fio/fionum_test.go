package fio

import (
	"errors"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/writepath/writepath/internal/testenv"
)

// numberCases are values as fio 3.33 reads them (fio --debug=parse prints
// "ret=0, out=N" for each): accepted with fio's value where its ignored
// tail is punctuation, refused naming fio's reading where it drops a
// letter or digit, invalid where fio gives up too.
var sizeCases = []struct {
	in      string
	want    uint64 // accepted as
	refused int64  // -1: accepted or invalid; else fio's reading, refused
	invalid bool
}{
	{"65536)", 65536, -1, false}, // fio's t/strided.py
	{"64k)", 65536, -1, false},
	{"4kb);", 4096, -1, false},
	{"+5", 5, -1, false},
	{"010", 10, -1, false}, // decimal, as strtoll base 10 (Go's base 0 read 8)
	{"0x10", 16, -1, false},
	{"0x1b", 27, -1, false},
	{"4KiB", 4000, -1, false}, // fio's kb_base=1024: IEC names are powers of 1000
	{"1MiB", 1000000, -1, false},
	{"4gib", 4000000000, -1, false},
	{"3b", 3, -1, false},
	{"4.5k", 0, 4, false},
	{"4 k", 0, 4, false},
	{"4x", 0, 4, false},
	{"4kx", 0, 4096, false},
	{"1e3", 0, 1, false},
	{"1_000", 0, 1, false},
	{"0x10k", 0, 16, false},
	{"0o17", 0, 0, false},
	{")", 0, -1, true},
	{"k", 0, -1, true},
	{"", 0, -1, true},
	{"-1", 0, -1, true},
	{"99999999999999999999", 0, -1, true},
}

var timeCases = []struct {
	in      string
	want    time.Duration // runtime=, bare seconds
	refused time.Duration // fio's reading, refused; 0 none
	invalid bool
}{
	{"10", 10 * time.Second, 0, false},
	{"10)", 10 * time.Second, 0, false},
	{"10s", 10 * time.Second, 0, false},
	{"500ms", 500 * time.Millisecond, 0, false},
	{"500msec", 500 * time.Millisecond, 0, false},
	{"5ms)", 5 * time.Millisecond, 0, false},
	{"10us", 10 * time.Microsecond, 0, false},
	{"2m", 2 * time.Minute, 0, false},
	{"1h", time.Hour, 0, false},
	{"2d", 48 * time.Hour, 0, false},
	{"10sec", 0, 10 * time.Microsecond, false},
	{"10min", 0, 10 * time.Microsecond, false},
	{"10ns", 0, 10 * time.Microsecond, false},
	{"10s)", 0, 10 * time.Microsecond, false},
	{"1.5s", 0, time.Second, false},
	{"10 ms", 0, 10 * time.Second, false},
	{"s", 0, 0, true},
}

func TestSizesReadAsFio(t *testing.T) {
	for _, tt := range sizeCases {
		got, err := parseSize(tt.in)
		var rr runRefusal
		switch {
		case tt.invalid:
			if err == nil || errors.As(err, &rr) {
				t.Errorf("parseSize(%q) = %d, %v; want invalid", tt.in, got, err)
			}
		case tt.refused >= 0:
			if !errors.As(err, &rr) || !strings.Contains(err.Error(), "as "+strconv.FormatInt(tt.refused, 10)+",") {
				t.Errorf("parseSize(%q) = %d, %v; want refused, naming fio's %d", tt.in, got, err, tt.refused)
			}
		case err != nil || got != tt.want:
			t.Errorf("parseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestTimesReadAsFio(t *testing.T) {
	for _, tt := range timeCases {
		got, err := parseTime(tt.in)
		var rr runRefusal
		switch {
		case tt.invalid:
			if err == nil || errors.As(err, &rr) {
				t.Errorf("parseTime(%q) = %v, %v; want invalid", tt.in, got, err)
			}
		case tt.refused > 0:
			if !errors.As(err, &rr) || !strings.Contains(err.Error(), "as "+tt.refused.String()+",") {
				t.Errorf("parseTime(%q) = %v, %v; want refused, naming fio's %v", tt.in, got, err, tt.refused)
			}
		case err != nil || got != tt.want:
			t.Errorf("parseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	// thinktime's bare numbers are microseconds, as fio's is_seconds=0
	if d, err := parseTimeIn("250)", time.Microsecond); err != nil || d != 250*time.Microsecond {
		t.Errorf("parseTimeIn(250), µs) = %v, %v; want 250µs", d, err)
	}
}

// A value writepath refuses for fio's reading is accepted by --parse-only
// (fio's is) and refused when the job runs, naming where.
func TestTailFioIgnoresRefusedAtRun(t *testing.T) {
	if _, err := ParseArgs([]string{"--name=a", "--filename=/tmp/x", "--size=1m", "--filesize=65536)", "--iodepth=4)", "--runtime=2)"}); err != nil {
		t.Errorf("filesize=65536) iodepth=4) runtime=2): %v; want accepted, as fio", err)
	}
	spec, err := ParseArgs([]string{"--name=a", "--filename=/tmp/x", "--size=1m", "--iodepth=1k"})
	if err != nil || spec.Jobs[0].Iodepth != 1024 {
		t.Errorf("iodepth=1k: %v; want 1024, as fio's FIO_OPT_INT", err)
	}
	_, err = ParseArgs([]string{"--name=a", "--filename=/tmp/x", "--size=1m", "--bs=4.5k"})
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `fio 3.33 reads "4.5k" as 4,`) {
		t.Errorf("bs=4.5k: %v; want refused at run, naming fio's 4", err)
	}
	c, err := ParseCommand([]string{"--parse-only", "--name=a", "--filename=/tmp/x", "--size=1m", "--bs=4.5k", "--runtime=10sec"})
	if err != nil || c.Action != ActionParseOnly {
		t.Errorf("--parse-only bs=4.5k runtime=10sec: %v, %v; want accepted, as fio's --parse-only", c, err)
	}
}

var fioParseOut = regexp.MustCompile(`ret=(\d+), out=(-?\d+)`)

// fioReads is what the real fio 3.33 makes of --opt=v: its first parse
// result, or ok=false where it refuses.
func fioReads(t *testing.T, fio, opt, v string) (int64, bool) {
	t.Helper()
	out, err := exec.Command(fio, "--debug=parse", "--parse-only", "--name=x", "--"+opt+"="+v).CombinedOutput()
	m := fioParseOut.FindSubmatch(out)
	if err != nil || m == nil || string(m[1]) != "0" {
		return 0, false
	}
	n, _ := strconv.ParseInt(string(m[2]), 10, 64)
	return n, true
}

// TestNumbersAgreeWithRealFio runs each case through fio 3.33's own
// parser: what writepath accepts, fio reads the same; what it refuses
// naming fio's reading, fio reads so; what it calls invalid, fio refuses
// (a negative count aside, which fio takes and writepath does not).
func TestNumbersAgreeWithRealFio(t *testing.T) {
	fio := testenv.Fio(t)
	if out, err := exec.Command(fio, "--debug=parse", "--parse-only", "--name=x", "--io_size=1").CombinedOutput(); err != nil || !fioParseOut.Match(out) {
		testenv.Need(t, "fio built with --debug=parse", errors.New(string(out)))
	}
	for _, tt := range sizeCases {
		got, ok := fioReads(t, fio, "io_size", tt.in)
		switch {
		case tt.invalid && tt.in != "-1":
			if ok {
				t.Errorf("io_size=%q: fio reads %d; writepath calls it invalid", tt.in, got)
			}
		case tt.invalid:
		case tt.refused >= 0 && (!ok || got != tt.refused):
			t.Errorf("io_size=%q: fio reads %d (ok %v); writepath names %d", tt.in, got, ok, tt.refused)
		case tt.refused < 0 && (!ok || uint64(got) != tt.want):
			t.Errorf("io_size=%q: fio reads %d (ok %v); writepath %d", tt.in, got, ok, tt.want)
		}
	}
	for _, tt := range timeCases {
		got, ok := fioReads(t, fio, "runtime", tt.in)
		d := time.Duration(got) * time.Microsecond
		switch {
		case tt.invalid:
			if ok {
				t.Errorf("runtime=%q: fio reads %v; writepath calls it invalid", tt.in, d)
			}
		case tt.refused > 0 && (!ok || d != tt.refused):
			t.Errorf("runtime=%q: fio reads %v (ok %v); writepath names %v", tt.in, d, ok, tt.refused)
		case tt.refused == 0 && (!ok || d != tt.want):
			t.Errorf("runtime=%q: fio reads %v (ok %v); writepath %v", tt.in, d, ok, tt.want)
		}
	}
}

// FuzzNumbers: no value panics the readers, and whatever writepath
// accepts as a plain number, fio 3.33's reading (fioValue) agrees with.
func FuzzNumbers(f *testing.F) {
	for _, tt := range sizeCases {
		f.Add(tt.in)
	}
	for _, tt := range timeCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if isExpr(s) {
			_, _ = parseSize(s)
			_, _ = parseTime(s)
			return
		}
		if n, err := parseSize(s); err == nil {
			if v, pct, ok := fioValue(s, true, false); !ok || pct || v < 0 || uint64(v) != n {
				t.Fatalf("parseSize(%q) = %d; fio reads %d (ok %v, %% %v)", s, n, v, ok, pct)
			}
		}
		for _, unit := range []time.Duration{time.Second, time.Microsecond} {
			if d, err := parseTimeIn(s, unit); err == nil {
				if v, _, ok := fioValue(s, false, unit == time.Second); !ok || time.Duration(v)*time.Microsecond != d {
					t.Fatalf("parseTimeIn(%q, %v) = %v; fio reads %d µs (ok %v)", s, unit, d, v, ok)
				}
			}
		}
	})
}
