package diskstats

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestParseRealSamples replays real /proc/diskstats captures of every
// kernel format (see testdata/SOURCES.md) and checks one device of each.
func TestParseRealSamples(t *testing.T) {
	tests := []struct {
		file   string
		lines  int
		dev    string
		fields int
		want   Counters
	}{
		{"14field-partitions-dm.txt", 8, "dm-0", 11, Counters{Major: 253, ReadIOs: 154910, ReadSectors: 6279522, ReadTicks: 177681,
			WriteIOs: 506513, WriteSectors: 11311544, WriteTicks: 5674418, IOTicks: 117752, TimeInQueue: 5852275, Fields: 11}},
		{"14field-partitions-dm.txt", 8, "sdb1", 11, Counters{Major: 8, Minor: 17, ReadIOs: 12601, ReadMerges: 3876, ReadSectors: 1521090, ReadTicks: 57424,
			WriteIOs: 992, WriteMerges: 3561, WriteSectors: 297576, WriteTicks: 97912, IOTicks: 37738, TimeInQueue: 155468, Fields: 11}},
		{"18field-partitions-dm.txt", 6, "sda2", 15, Counters{Major: 8, Minor: 2, ReadIOs: 620222, ReadMerges: 177402, ReadSectors: 25628430, ReadTicks: 381763,
			WriteIOs: 161032, WriteMerges: 889674, WriteSectors: 22258065, WriteTicks: 248699, IOTicks: 291558, TimeInQueue: 362268, Fields: 15}},
		{"20field-5.15-partitions-dm.txt", 11, "vdb", 17, Counters{Major: 252, Minor: 16, ReadIOs: 124488, ReadMerges: 755, ReadSectors: 7518107, ReadTicks: 29803,
			WriteIOs: 401035, WriteMerges: 119516, WriteSectors: 20334987, WriteTicks: 262445, IOTicks: 255524, TimeInQueue: 302282,
			FlushIOs: 91364, FlushTicks: 10033, Fields: 17}},
		{"20field-nvme-kernel-doc.txt", 3, "nvme0n1", 17, Counters{Major: 259, ReadIOs: 255999, ReadMerges: 814, ReadSectors: 12369153, ReadTicks: 47919,
			WriteIOs: 996852, WriteMerges: 81, WriteSectors: 36123024, WriteTicks: 425995, IOTicks: 301795, TimeInQueue: 580470,
			FlushIOs: 60602, FlushTicks: 106555, Fields: 17}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.dev, func(t *testing.T) {
			lines := mustParseFile(t, tt.file)
			if len(lines) != tt.lines {
				t.Fatalf("Parse(%s) = %d lines; want %d", tt.file, len(lines), tt.lines)
			}
			got, ok := find(lines, tt.dev)
			if !ok {
				t.Fatalf("Parse(%s) has no %s", tt.file, tt.dev)
			}
			if got != tt.want {
				t.Errorf("Parse(%s)[%s] =\n %+v; want\n %+v", tt.file, tt.dev, got, tt.want)
			}
		})
	}
}

// TestParseThisMachine parses this machine's own capture: every line has
// the 6.x kernel's 17 counters.
func TestParseThisMachine(t *testing.T) {
	lines := mustParseFile(t, "vda-6.18-20field.txt")
	vda, ok := find(lines, "vda")
	if !ok || !vda.HasFlushes() || !vda.HasDiscards() || vda.WriteIOs == 0 {
		t.Fatalf("vda = %+v, %v; want a 17-counter line with writes", vda, ok)
	}
	for _, l := range lines {
		if l.Fields != 17 {
			t.Errorf("%s: Fields = %d; want 17", l.Name, l.Fields)
		}
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		line    string
		name    string
		want    Counters
		wantErr bool
	}{
		// A pre-2.6.25 partition line carries only 4 counters.
		{line: "   3    1 hda1 35486 38030 38030 38030", name: "hda1",
			want: Counters{Major: 3, Minor: 1, ReadIOs: 35486, ReadSectors: 38030, WriteIOs: 38030, WriteSectors: 38030, Fields: 4}},
		// Future kernels may append counters: the first 17 are used.
		{line: "8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", name: "sda",
			want: Counters{Major: 8, ReadIOs: 1, ReadMerges: 2, ReadSectors: 3, ReadTicks: 4, WriteIOs: 5, WriteMerges: 6, WriteSectors: 7, WriteTicks: 8,
				InFlight: 9, IOTicks: 10, TimeInQueue: 11, DiscardIOs: 12, DiscardMerges: 13, DiscardSectors: 14, DiscardTicks: 15, FlushIOs: 16, FlushTicks: 17, Fields: 17}},
		{line: "8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", name: "sda",
			want: Counters{Major: 8, ReadIOs: 1, ReadMerges: 2, ReadSectors: 3, ReadTicks: 4, WriteIOs: 5, WriteMerges: 6, WriteSectors: 7, WriteTicks: 8,
				InFlight: 9, IOTicks: 10, TimeInQueue: 11, DiscardIOs: 12, DiscardMerges: 13, DiscardSectors: 14, DiscardTicks: 15, Fields: 15}},
		{line: "8 0 sda 1 2 3 4 5", wantErr: true},
		{line: "8 0 sda", wantErr: true},
		{line: "8 0", wantErr: true},
		{line: "x 0 sda 1 2 3 4", wantErr: true},
		{line: "8 0 sda 1 2 3 -4", wantErr: true},
		{line: "8 0 sda 1 2 3 18446744073709551616", wantErr: true},
		{line: "4294967296 0 sda 1 2 3 4", wantErr: true},
	}
	for _, tt := range tests {
		name, got, err := ParseLine([]byte(tt.line))
		if tt.wantErr {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("ParseLine(%q) error = %v; want ErrFormat", tt.line, err)
			}
			continue
		}
		if err != nil || string(name) != tt.name || got != tt.want {
			t.Errorf("ParseLine(%q) = %q, %+v, %v; want %q, %+v", tt.line, name, got, err, tt.name, tt.want)
		}
	}
}

func TestParseNamesBadLine(t *testing.T) {
	_, err := Parse([]byte("8 0 sda 1 2 3 4\n\n8 1 sda1 x\n"))
	if !errors.Is(err, ErrFormat) || err.Error() == "" {
		t.Fatalf("Parse() error = %v; want ErrFormat", err)
	}
	if want := "diskstats line 3: "; err.Error()[:len(want)] != want {
		t.Errorf("Parse() error = %q; want it to start with %q", err, want)
	}
}

func TestParseLineDoesNotAllocate(t *testing.T) {
	line := []byte(" 254       0 vda 40060 6516 1800018 10046 33948 64366 6354616 30966 0 8968 42406 12982 59 2206032 1118 6327 275")
	if n := testing.AllocsPerRun(100, func() { _, _, _ = ParseLine(line) }); n != 0 {
		t.Errorf("ParseLine allocates %v times; want 0", n)
	}
}

// FuzzParse checks that no input panics and that every accepted line
// round-trips its device name and counter count.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"vda-6.18-20field.txt", "18field-partitions-dm.txt", "14field-partitions-dm.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := Parse(data)
		if err != nil {
			return
		}
		for _, l := range lines {
			if l.Name == "" || (l.Fields != 4 && l.Fields != 11 && l.Fields != 15 && l.Fields != 17) {
				t.Fatalf("Parse accepted %+v", l)
			}
		}
	})
}

func mustParseFile(t *testing.T, name string) []Line {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return lines
}

func find(lines []Line, name string) (Counters, bool) {
	for _, l := range lines {
		if l.Name == name {
			return l.Counters, true
		}
	}
	return Counters{}, false
}
