package diskstats

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestSamplerSeesLoad samples this machine's disk around a write+fsync load
// and checks the interval shows the writes and flushes.
func TestSamplerSeesLoad(t *testing.T) {
	dev := deviceOf(t, "/var/tmp")
	s, err := NewSampler(DefaultPath, []string{dev})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); writeLoad(ctx, t, "/var/tmp") }()
	wg.Wait()
	cancel()
	ivs, err := s.Sample(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 1 || ivs[0].Device != dev || !ivs[0].End.After(ivs[0].Start) {
		t.Fatalf("Sample() = %+v; want one interval of %s", ivs, dev)
	}
	st := ivs[0].Stats()
	if ivs[0].Delta.WriteIOs == 0 || st.WritesPerSec <= 0 || st.UtilPct <= 0 {
		t.Errorf("Sample() after load: delta %+v stats %+v; want writes and util", ivs[0].Delta, st)
	}
	if st.HasFlushes && ivs[0].Delta.FlushIOs == 0 {
		t.Errorf("Sample() after fsyncs: no flushes in %+v", ivs[0].Delta)
	}
}

// TestSamplerFakeFile drives a Sampler over a file the test rewrites.
func TestSamplerFakeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "diskstats")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(" 8 0 sda 1 0 8 1 10 0 80 10 0 5 11\n 8 1 sda1 1 0 8 1 10 0 80 10 0 5 11\n 253 0 dm-0 0 0 0 0 0 0 0 0 0 0 0\n")
	s, err := NewSampler(path, []string{"dm-0", "sda", "sda"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Devices(); len(got) != 2 || got[0] != "dm-0" || got[1] != "sda" {
		t.Fatalf("Devices() = %v; want [dm-0 sda]", got)
	}
	write(" 8 0 sda 1 0 8 1 30 0 240 50 0 505 111\n 253 0 dm-0 0 0 0 0 5 0 40 4 0 4 4\n")
	ivs, err := s.Sample(nil)
	if err != nil {
		t.Fatal(err)
	}
	if ivs[1].Delta.WriteIOs != 20 || ivs[1].Delta.IOTicks != 500 || ivs[0].Delta.WriteIOs != 5 {
		t.Errorf("Sample() = %+v; want sda +20 writes, dm-0 +5", ivs)
	}
	write(" 8 0 sda 1 0 8 1 30 0 240 50 0 505 111\n")
	if _, err := s.Sample(nil); !errors.Is(err, ErrNoDevice) {
		t.Errorf("Sample() with dm-0 gone: error = %v; want ErrNoDevice", err)
	}
	if err := s.Close(); err != nil || s.Close() != nil {
		t.Errorf("Close twice: %v", err)
	}
}

func TestNewSamplerErrors(t *testing.T) {
	if _, err := NewSampler(DefaultPath, nil); err == nil {
		t.Error("NewSampler(no devices) succeeded")
	}
	if _, err := NewSampler(DefaultPath, []string{"no-such-disk"}); !errors.Is(err, ErrNoDevice) {
		t.Errorf("NewSampler(no-such-disk) error = %v; want ErrNoDevice", err)
	}
}

func TestSampleDoesNotAllocate(t *testing.T) {
	s, err := NewSampler(DefaultPath, []string{deviceOf(t, "/var/tmp")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dst := make([]Interval, 0, 4)
	if n := testing.AllocsPerRun(50, func() { dst, _ = s.Sample(dst[:0]) }); n != 0 {
		t.Errorf("Sample allocates %v times per call; want 0", n)
	}
}

// BenchmarkSample is one interval's work on a worker: re-read
// /proc/diskstats, parse the wanted line, diff, compute iostat columns.
func BenchmarkSample(b *testing.B) {
	dev := "vda"
	if devs, err := DefaultResolver().Paths("/var/tmp"); err == nil {
		dev = devs[0].Name
	}
	s, err := NewSampler(DefaultPath, []string{dev})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	dst := make([]Interval, 0, 1)
	b.ReportAllocs()
	for b.Loop() {
		dst, err = s.Sample(dst[:0])
		if err != nil {
			b.Fatal(err)
		}
		_ = dst[0].Stats()
	}
}
