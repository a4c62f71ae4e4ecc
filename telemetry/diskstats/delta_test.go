package diskstats

import (
	"fmt"
	"testing"
	"time"
)

// TestStatsMatchesRecordedIostat replays two lines that Debian's sysstat
// 12.6.1 read through `iostat -x -d -p ALL -f DIR 1 2` (the second line
// swapped in during the sleep) and the columns it printed for them; iostat
// measured the interval as 148 hundredths of a second. IOTicks and
// TimeInQueue go backwards here: iostat subtracts them as 32-bit unsigned
// values and prints the wrapped result, so must we.
func TestStatsMatchesRecordedIostat(t *testing.T) {
	_, prev, err := ParseLine([]byte(" 254       0 vda 100 10 2000 500 200 20 4000 900 1 5000 9000 0 0 0 0 10 40"))
	if err != nil {
		t.Fatal(err)
	}
	_, cur, err := ParseLine([]byte(" 254       0 vda 150 12 2400 600 260 30 4800 1000 1 4000 8000 0 0 0 0 14 48"))
	if err != nil {
		t.Fatal(err)
	}
	d := Diff(&prev, &cur)
	got := d.Stats(1480 * time.Millisecond)
	// Header and line exactly as iostat printed them.
	want := map[string]string{
		"r/s": "33.78", "rkB/s": "135.14", "rrqm/s": "1.35", "%rrqm": "3.85", "r_await": "2.00", "rareq-sz": "4.00",
		"w/s": "40.54", "wkB/s": "270.27", "wrqm/s": "6.76", "%wrqm": "14.29", "w_await": "1.67", "wareq-sz": "6.67",
		"d/s": "0.00", "dkB/s": "0.00", "drqm/s": "0.00", "%drqm": "0.00", "d_await": "0.00", "dareq-sz": "0.00",
		"f/s": "2.70", "f_await": "2.00", "aqu-sz": "2902004.25", "%util": "290200425.41",
	}
	for _, c := range Columns() {
		if g := fmt.Sprintf("%.2f", c.Value(&got)); g != want[c.Name] {
			t.Errorf("%s = %s; iostat printed %s", c.Name, g, want[c.Name])
		}
	}
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name      string
		prev, cur Counters
		want      Delta
	}{
		{name: "plain increase",
			prev: Counters{ReadIOs: 10, WriteIOs: 20, WriteSectors: 800, WriteTicks: 30, IOTicks: 100, TimeInQueue: 200, Fields: 17},
			cur:  Counters{ReadIOs: 15, WriteIOs: 30, WriteSectors: 1600, WriteTicks: 50, IOTicks: 600, TimeInQueue: 900, InFlight: 3, Fields: 17},
			want: Delta{ReadIOs: 5, WriteIOs: 10, WriteSectors: 800, WriteTicks: 20, IOTicks: 500, TimeInQueue: 700, InFlight: 3, Fields: 17}},
		{name: "32-bit tick counters wrap",
			prev: Counters{WriteIOs: 1, WriteSectors: 8, WriteTicks: 1<<32 - 10, IOTicks: 1<<32 - 1, Fields: 11},
			cur:  Counters{WriteIOs: 2, WriteSectors: 16, WriteTicks: 5, IOTicks: 99, Fields: 11},
			want: Delta{WriteIOs: 1, WriteSectors: 8, WriteTicks: 15, IOTicks: 100, Fields: 11}},
		{name: "device re-inserted: previous taken as zero",
			prev: Counters{ReadIOs: 1000, ReadSectors: 8000, WriteIOs: 500, WriteSectors: 4000, Fields: 17},
			cur:  Counters{ReadIOs: 3, ReadSectors: 24, WriteIOs: 1, WriteSectors: 8, Fields: 17},
			want: Delta{ReadIOs: 3, ReadSectors: 24, WriteIOs: 1, WriteSectors: 8, Fields: 17, Reset: true}},
	}
	for _, tt := range tests {
		if got := Diff(&tt.prev, &tt.cur); got != tt.want {
			t.Errorf("%s: Diff(%+v, %+v) =\n %+v; want\n %+v", tt.name, tt.prev, tt.cur, got, tt.want)
		}
	}
}

func TestStatsIdleAndZeroInterval(t *testing.T) {
	if got := (Delta{Fields: 17}).Stats(time.Second); got != (Stats{HasDiscards: true, HasFlushes: true}) {
		t.Errorf("idle Stats = %+v; want zeros", got)
	}
	if got := (Delta{WriteIOs: 5, Fields: 11}).Stats(0); got.WritesPerSec != 0 {
		t.Errorf("Stats(0).WritesPerSec = %v; want 0", got.WritesPerSec)
	}
}

// TestDeltaAddIsWindow checks that summed Deltas over a summed interval give
// the window's figures, so intervals can be aggregated after the fact.
func TestDeltaAddIsWindow(t *testing.T) {
	a := Counters{WriteIOs: 100, WriteSectors: 800, WriteTicks: 50, IOTicks: 10, Fields: 17}
	b := Counters{WriteIOs: 160, WriteSectors: 1800, WriteTicks: 80, IOTicks: 700, Fields: 17}
	c := Counters{WriteIOs: 400, WriteSectors: 9000, WriteTicks: 400, IOTicks: 1500, Fields: 17}
	var sum Delta
	sum.Add(Diff(&a, &b))
	sum.Add(Diff(&b, &c))
	whole := Diff(&a, &c)
	if sum.Stats(2*time.Second) != whole.Stats(2*time.Second) {
		t.Errorf("summed = %+v; whole = %+v", sum.Stats(2*time.Second), whole.Stats(2*time.Second))
	}
}
