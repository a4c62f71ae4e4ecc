package hist

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// TestAccumulatorEqualsMerge: decoding sparse and accumulating gives the
// same histogram as decoding densely and merging, bucket for bucket.
func TestAccumulatorEqualsMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dense, acc := New(), NewAccumulator()
	var d Decoder
	for i := range 20 {
		h := New()
		for range 100 * i {
			h.Record(int64(100 * pow(1e8, rng.Float64())))
		}
		h.RecordN(Highest, 3) // the last bucket, and a 9-byte-free big count
		b, err := h.Encode()
		if err != nil {
			t.Fatal(err)
		}
		dd, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		s, err := d.DecodeSparse(b)
		if err != nil {
			t.Fatalf("DecodeSparse: %v", err)
		}
		if s.Count() != h.Count() {
			t.Fatalf("sparse Count() = %d; want %d", s.Count(), h.Count())
		}
		if err := dense.Merge(dd); err != nil {
			t.Fatal(err)
		}
		if err := acc.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	got := acc.Histogram()
	if !slices.Equal(got.counts, dense.counts) || got.total != dense.total {
		t.Fatalf("accumulated histogram differs from the dense merge")
	}
	if got.Count() != dense.Count() || got.Percentile(99.9) != dense.Percentile(99.9) || got.Max() != dense.Max() {
		t.Errorf("count/p99.9/max = %d/%d/%d; want %d/%d/%d", got.Count(), got.Percentile(99.9), got.Max(),
			dense.Count(), dense.Percentile(99.9), dense.Max())
	}
}

func TestDecodeSparseRefuses(t *testing.T) {
	foreign := hdr.New(1, 1<<40, 5)
	foreign.RecordValue(1234)
	fb, _ := foreign.Encode(hdr.V2CompressedEncodingCookieBase)
	h := New()
	h.Record(1000)
	good, _ := h.Encode()
	var d Decoder
	for name, in := range map[string][]byte{
		"empty": nil, "not base64": []byte("!!!!"), "oversize": make([]byte, MaxEncodedSize+1),
		"other geometry": fb, "truncated": good[:len(good)-8],
	} {
		if _, err := d.DecodeSparse(in); !errors.Is(err, ErrBadEncoding) {
			t.Errorf("%s: DecodeSparse error = %v; want ErrBadEncoding", name, err)
		}
	}
	if _, err := d.DecodeSparse(good); err != nil {
		t.Errorf("good after bad: %v", err)
	}
}

func FuzzDecodeSparse(f *testing.F) {
	h := New()
	h.Record(1000)
	h.Record(5e9)
	b, _ := h.Encode()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Decoder
		s, err := d.DecodeSparse(b)
		dense, derr := Decode(b)
		if err != nil {
			return
		}
		a := NewAccumulator()
		if err := a.Add(s); err != nil {
			return
		}
		if derr == nil && a.Histogram().Count() != dense.Count() {
			t.Errorf("sparse count %d, dense count %d", a.Histogram().Count(), dense.Count())
		}
	})
}

// fleetHistogram is one 1 s interval of a 5k IOPS host: 5,000 latencies,
// log-normal around 200 µs with a tail to ~50 ms, as a worker encodes it.
func fleetHistogram(b testing.TB, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 4))
	h := New()
	for range 5000 {
		h.Record(int64(200e3 * (0.2 + rng.ExpFloat64()*rng.ExpFloat64())))
	}
	enc, err := h.Encode()
	if err != nil {
		b.Fatal(err)
	}
	return enc
}

// BenchmarkDecodeSparse is the coordinator's cost per worker interval:
// decode one fleet histogram and add it to the interval's accumulator.
func BenchmarkDecodeSparse(b *testing.B) {
	encs := make([][]byte, 16)
	for i := range encs {
		encs[i] = fleetHistogram(b, uint64(i))
	}
	var d Decoder
	acc := NewAccumulator()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d.Reset()
		s, err := d.DecodeSparse(encs[i%len(encs)])
		if err != nil {
			b.Fatal(err)
		}
		acc.Add(s)
		i++
	}
}
