package hist

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// TestMergeEqualsUnion checks the property the fabric relies on: splitting a
// sample set across any number of histograms and merging them gives exactly
// the histogram of the whole set.
func TestMergeEqualsUnion(t *testing.T) {
	for _, parts := range []int{1, 2, 3, 7, 64} {
		rng := rand.New(rand.NewPCG(uint64(parts), 42))
		all := New()
		split := make([]*Histogram, parts)
		for i := range split {
			split[i] = New()
		}
		for i := 0; i < 50_000; i++ {
			// Log-uniform from 100 ns to ~10 s, the span of real storage latency.
			v := int64(100 * pow(1e8, rng.Float64()))
			all.Record(v)
			split[rng.IntN(parts)].Record(v)
		}
		merged := New()
		for _, h := range split {
			if err := merged.Merge(h); err != nil {
				t.Fatalf("parts=%d: Merge: %v", parts, err)
			}
		}
		ps := []float64{50, 90, 99, 99.9, 99.99, 100}
		got, want := merged.Percentiles(ps), all.Percentiles(ps)
		for i := range ps {
			if got[i] != want[i] {
				t.Errorf("parts=%d: merged p%v = %d; want %d", parts, ps[i], got[i], want[i])
			}
		}
		if merged.Count() != all.Count() || merged.Max() != all.Max() || merged.Min() != all.Min() {
			t.Errorf("parts=%d: merged count/min/max = %d/%d/%d; want %d/%d/%d", parts,
				merged.Count(), merged.Min(), merged.Max(), all.Count(), all.Min(), all.Max())
		}
	}
}

func pow(b, e float64) float64 { return math.Pow(b, e) }

func TestEncodeDecodeRoundTrip(t *testing.T) {
	h := New()
	for i := int64(1); i < 100_000; i += 7 {
		h.Record(i * 1000)
	}
	h.Record(2 * Highest) // overflow is clamped, not lost
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 8<<10 {
		t.Errorf("encoded size = %d bytes; want a few KB", len(b))
	}
	d, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if d.Count() != h.Count() || d.Percentile(99) != h.Percentile(99) || d.Max() != h.Max() {
		t.Errorf("decoded count/p99/max = %d/%d/%d; want %d/%d/%d",
			d.Count(), d.Percentile(99), d.Max(), h.Count(), h.Percentile(99), h.Max())
	}
	if h.Overflow() != 1 {
		t.Errorf("Overflow() = %d; want 1", h.Overflow())
	}
}

func TestDecodeRefuses(t *testing.T) {
	foreign := hdr.New(1, 1<<40, 5) // another geometry: merging it would be inexact
	foreign.RecordValue(1234)
	fb, _ := foreign.Encode(hdr.V2CompressedEncodingCookieBase)
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"not base64", []byte("!!!!"), "base64"},
		{"oversize", bytes.Repeat([]byte("A"), MaxEncodedSize+1), "limit"},
		{"other geometry", fb, "geometry"},
		{"truncated", fb[:20], "bad encoded"},
	}
	for _, tt := range tests {
		_, err := Decode(tt.in)
		if !errors.Is(err, ErrBadEncoding) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Decode() error = %v; want ErrBadEncoding mentioning %q", tt.name, err, tt.want)
		}
	}
}

func TestEmptyAndHgrm(t *testing.T) {
	h := New()
	if h.Percentile(99) != 0 || h.Max() != 0 || h.Min() != 0 || h.Mean() != 0 {
		t.Errorf("empty histogram reports non-zero stats")
	}
	for i := int64(1); i <= 1000; i++ {
		h.Record(i * 1e6)
	}
	var buf bytes.Buffer
	if err := h.WriteHgrm(&buf, 1e6); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "Value") || !strings.Contains(out, "Total count    =         1000") {
		t.Errorf("hgrm output lacks header or count:\n%s", out)
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	h := New()
	if n := testing.AllocsPerRun(1000, func() { h.Record(12345) }); n != 0 {
		t.Errorf("Record allocates %v times per call; want 0", n)
	}
}

func FuzzDecode(f *testing.F) {
	h := New()
	h.Record(1000)
	b, _ := h.Encode()
	f.Add(b)
	f.Add([]byte("HISTFAAAACR42pNpmSzMwMDAxQABzFCaEUzOmnj2GIT1lDGHgQkAQx8E8w=="))
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := Decode(in)
		if err != nil {
			return
		}
		// Whatever decodes must merge exactly into our geometry.
		m := New()
		if err := m.Merge(d); err != nil {
			t.Fatalf("decoded histogram does not merge: %v", err)
		}
	})
}

func TestValuesAtRanks(t *testing.T) {
	h := New()
	if got := h.ValuesAtRanks([]int64{1}); got[0] != 0 {
		t.Errorf("empty ValuesAtRanks = %v; want [0]", got)
	}
	for i := int64(1); i <= 1000; i++ {
		h.Record(i * 1000)
	}
	for i, r := range []int64{0, 1, 500, 999, 1000, 5000} {
		want := min(max(r, 1), 1000) * 1000
		if got := h.ValuesAtRanks([]int64{r})[0]; !h.Equivalent(got, want) {
			t.Errorf("case %d: ValuesAtRanks(%d) = %d; want ~%d", i, r, got, want)
		}
	}
	// Where round(p·N) and ceil(p·N) agree, so do the two readings.
	if a, b := h.ValuesAtRanks([]int64{990})[0], h.Percentile(99); a != b {
		t.Errorf("rank 990 = %d, p99 = %d; want the same value", a, b)
	}
}
