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
