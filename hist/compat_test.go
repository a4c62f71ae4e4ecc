package hist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// compatSets are value sets that exercise the geometry: empty, one value,
// zero, the top, unit-resolution values, every bucket, and latency-like
// spreads.
func compatSets() map[string][]int64 {
	rng := rand.New(rand.NewPCG(7, 11))
	sets := map[string][]int64{
		"empty":  nil,
		"zero":   {0, 0, 0},
		"one":    {123456},
		"top":    {Highest, Highest - 1, 1},
		"unit":   {1, 2, 2047, 2048, 2049, 4095, 4096},
		"repeat": slices.Repeat([]int64{5_000_000}, 1000),
	}
	var buckets, loguni, expo []int64
	for b := 0; b < 42; b++ {
		buckets = append(buckets, 1<<b, 1<<b+1, 3<<b/2)
	}
	for range 20_000 {
		loguni = append(loguni, int64(pow(float64(Highest), rng.Float64())))
		expo = append(expo, int64(200_000+rng.ExpFloat64()*3e6))
	}
	sets["buckets"], sets["loguniform"], sets["exponential"] = buckets, loguni, expo
	return sets
}

func both(vals []int64) (*Histogram, *hdr.Histogram) {
	h, r := New(), hdr.New(Lowest, Highest, SigFigs)
	for _, v := range vals {
		h.Record(v)
		if err := r.RecordValue(min(v, Highest)); err != nil {
			panic(err)
		}
	}
	return h, r
}

// TestMatchesHdrhistogram: every query and the buckets are exactly
// hdrhistogram-go's for the same values, the uncompressed V2 payload is
// byte for byte its own, and each side decodes the other's encoding.
func TestMatchesHdrhistogram(t *testing.T) {
	ps := []float64{0, 0.1, 1, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 99.999, 100, 150, -5}
	for name, vals := range compatSets() {
		h, r := both(vals)
		assertSame(t, name, h, r, ps)
		b, err := h.Encode()
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := hdr.Decode(b)
		if err != nil {
			t.Fatalf("%s: hdrhistogram-go cannot decode Encode(): %v", name, err)
		}
		if !theirs.Equals(r) {
			t.Errorf("%s: hdrhistogram-go decodes Encode() to another histogram", name)
		}
		if got, want := h.appendV2(nil), v2Payload(t, r); !bytes.Equal(got, want) {
			t.Errorf("%s: V2 payload differs from hdrhistogram-go's (%d vs %d bytes)", name, len(got), len(want))
		}
		want, _ := r.Encode(hdr.V2CompressedEncodingCookieBase)
		d, err := Decode(want)
		if err != nil {
			t.Fatalf("%s: Decode: %v", name, err)
		}
		assertSame(t, name+" decoded", d, r, ps)
	}
}

// v2Payload is hdrhistogram-go's uncompressed V2 encoding of r.
func v2Payload(t *testing.T, r *hdr.Histogram) []byte {
	t.Helper()
	b, _ := r.Encode(hdr.V2CompressedEncodingCookieBase)
	raw, err := base64.StdEncoding.DecodeString(string(b))
	if err != nil {
		t.Fatal(err)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		t.Fatal(err)
	}
	p, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func assertSame(t *testing.T, name string, h *Histogram, r *hdr.Histogram, ps []float64) {
	t.Helper()
	if h.Count() != r.TotalCount() {
		t.Fatalf("%s: Count() = %d; hdr %d", name, h.Count(), r.TotalCount())
	}
	if r.TotalCount() == 0 {
		return // hist answers 0 for an empty histogram (its callers' contract)
	}
	if h.Min() != r.Min() || h.Max() != r.Max() {
		t.Errorf("%s: Min/Max = %d/%d; hdr %d/%d", name, h.Min(), h.Max(), r.Min(), r.Max())
	}
	if h.Mean() != r.Mean() || h.StdDev() != r.StdDev() {
		t.Errorf("%s: Mean/StdDev = %v/%v; hdr %v/%v", name, h.Mean(), h.StdDev(), r.Mean(), r.StdDev())
	}
	for _, p := range ps {
		if got, want := h.Percentile(p), r.ValueAtPercentile(p); got != want {
			t.Errorf("%s: Percentile(%v) = %d; hdr %d", name, p, got, want)
		}
	}
	if got, want := h.Percentiles(ps), r.ValueAtPercentilesSlice(ps); !slices.Equal(got, want) {
		t.Errorf("%s: Percentiles = %v; hdr %v", name, got, want)
	}
	var want []Bar
	for _, b := range r.Distribution() {
		if b.Count != 0 {
			want = append(want, Bar{From: b.From, To: b.To, Count: b.Count})
		}
	}
	if got := h.Buckets(); !slices.Equal(got, want) {
		t.Errorf("%s: Buckets differ from hdr's distribution (%d vs %d bars)", name, len(got), len(want))
	}
}

// TestGeometryMatchesHdrhistogram: the counts array has hdrhistogram-go's
// length, and values land at its indexes and equivalence classes.
func TestGeometryMatchesHdrhistogram(t *testing.T) {
	r := hdr.New(Lowest, Highest, SigFigs)
	if n := len(r.Export().Counts); n != countsLen {
		t.Fatalf("countsLen = %d; hdrhistogram-go has %d", countsLen, n)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		v := int64(pow(float64(Highest), rng.Float64()))
		r.Reset()
		_ = r.RecordValue(v)
		idx := slices.IndexFunc(r.Export().Counts, func(c int64) bool { return c != 0 })
		if idx != indexOf(v) {
			t.Fatalf("indexOf(%d) = %d; hdr %d", v, indexOf(v), idx)
		}
		if lowestEquivalent(valueAt(idx)) != lowestEquivalent(v) {
			t.Fatalf("valueAt(%d) = %d is not in %d's bucket", idx, valueAt(idx), v)
		}
		w := v + rng.Int64N(v/500+2) - 1
		if w >= 0 && w <= Highest && New().Equivalent(v, w) != r.ValuesAreEquivalent(v, w) {
			t.Fatalf("Equivalent(%d, %d) differs from hdr", v, w)
		}
	}
}

// TestMergeResetMatchHdrhistogram: merges into a histogram that is reset
// and reused give what hdrhistogram-go's merges give.
func TestMergeResetMatchHdrhistogram(t *testing.T) {
	sets := compatSets()
	h, r := New(), hdr.New(Lowest, Highest, SigFigs)
	for round := range 3 {
		h.Reset()
		r.Reset()
		for _, name := range []string{"loguniform", "zero", "top", "one", "empty", "exponential"} {
			a, b := both(sets[name])
			if err := h.Merge(a); err != nil {
				t.Fatal(err)
			}
			r.Merge(b)
		}
		assertSame(t, "merged", h, r, []float64{1, 50, 99, 99.99, 100})
		if round == 1 {
			h.RecordN(7_000, 5)
			_ = r.RecordValues(7_000, 5)
		}
	}
}
