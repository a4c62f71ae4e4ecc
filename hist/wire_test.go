package hist

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSparseEncodingRoundTrips: a histogram sent in the sparse wire
// encoding decodes to the same buckets as through HDR's V2, whether the
// first or last bucket is used, the counts are big or the histogram is
// empty.
func TestSparseEncodingRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	big := New()
	big.RecordN(0, 1<<40)
	big.RecordN(Highest, 3)
	spread := New()
	for range 20000 {
		spread.Record(int64(100 * pow(1e8, rng.Float64())))
	}
	for _, tc := range []struct {
		name string
		h    *Histogram
	}{{"empty", New()}, {"one value", func() *Histogram { h := New(); h.Record(1000); return h }()},
		{"first and last bucket, big counts", big}, {"spread over the range", spread}} {
		t.Run(tc.name, func(t *testing.T) {
			v2, err := tc.h.Encode()
			if err != nil {
				t.Fatal(err)
			}
			want, err := Decode(v2)
			if err != nil {
				t.Fatal(err)
			}
			wire := tc.h.EncodeSparse()
			if !IsSparseEncoding(wire) || IsSparseEncoding(v2) {
				t.Fatalf("IsSparseEncoding: sparse %v, V2 %v", IsSparseEncoding(wire), IsSparseEncoding(v2))
			}
			if app := tc.h.AppendSparse([]byte("x")); !slices.Equal(app[1:], wire) {
				t.Errorf("AppendSparse differs from EncodeSparse")
			}
			got, err := Decode(wire)
			if err != nil {
				t.Fatalf("Decode(sparse): %v", err)
			}
			if !slices.Equal(got.counts, want.counts) || got.Count() != want.Count() || got.Max() != want.Max() {
				t.Errorf("sparse decodes to count %d max %d; V2 to %d, %d", got.Count(), got.Max(), want.Count(), want.Max())
			}
			var d Decoder
			s, err := d.DecodeSparse(wire)
			if err != nil || s.Count() != tc.h.Count() {
				t.Errorf("DecodeSparse = count %d, %v; want %d", s.Count(), err, tc.h.Count())
			}
		})
	}
}

func TestSparseEncodingRefuses(t *testing.T) {
	h := New()
	h.Record(1000)
	h.Record(2000)
	good := h.EncodeSparse()
	pre := New().EncodeSparse()
	pre = pre[:len(pre)-1] // magic, digits, lowest, highest; n follows
	with := func(b ...byte) []byte { return append(slices.Clone(pre), b...) }
	for name, in := range map[string][]byte{
		"magic only":          {sparseMagic},
		"other digits":        append([]byte{sparseMagic, 2}, good[2:]...),
		"geometry cut":        pre[:4],
		"truncated":           good[:len(good)-1],
		"trailing byte":       append(slices.Clone(good), 0),
		"zero count":          with(1, sparseLong, 20, 0),
		"past the range":      with(1, sparseLong, 0x80, 0x88, 0x02, 1), // gap 33,792
		"more buckets":        with(5, 0),
		"bucket missing":      with(2, 0, sparseLong, 20),
		"count overflows":     with(2, sparseLong, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0),
		"long form that fits": with(1, sparseLong, 0, 1),
		"bad lead byte":       with(1, 0x81),
	} {
		var d Decoder
		if _, err := d.DecodeSparse(in); !errors.Is(err, ErrBadEncoding) {
			t.Errorf("%s: DecodeSparse error = %v; want ErrBadEncoding", name, err)
		}
		if _, err := Decode(in); !errors.Is(err, ErrBadEncoding) {
			t.Errorf("%s: Decode error = %v; want ErrBadEncoding", name, err)
		}
	}
}

func FuzzDecodeSparseWire(f *testing.F) {
	h := New()
	h.Record(1000)
	h.Record(5e9)
	f.Add(h.EncodeSparse())
	f.Add(New().EncodeSparse())
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Decoder
		s, err := d.DecodeSparse(b)
		if err != nil {
			return
		}
		a := NewAccumulator()
		if err := a.Add(s); err != nil {
			t.Fatalf("a decoded histogram does not add to an empty one: %v", err)
		}
		// What decodes re-encodes to the same bytes: one encoding per
		// histogram, so a stored snapshot means one thing.
		if re := a.Histogram().EncodeSparse(); IsSparseEncoding(b) && !slices.Equal(re, b) {
			t.Errorf("re-encoded %x; decoded %x", re, b)
		}
	})
}

// BenchmarkDecodeSparseWire is BenchmarkDecodeSparse for histograms in the
// sparse wire encoding: the coordinator's cost per worker interval.
func BenchmarkDecodeSparseWire(b *testing.B) {
	encs := make([][]byte, 16)
	for i := range encs {
		h, err := Decode(fleetHistogram(b, uint64(i)))
		if err != nil {
			b.Fatal(err)
		}
		encs[i] = h.EncodeSparse()
	}
	var d Decoder
	acc := NewAccumulator()
	b.ReportAllocs()
	b.ReportMetric(float64(len(encs[0])), "bytes/histogram")
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

// BenchmarkEncodeSparse is BenchmarkEncode in the sparse wire encoding: a
// worker's cost per op per interval.
func BenchmarkEncodeSparse(b *testing.B) {
	h := interval()
	b.ReportAllocs()
	for b.Loop() {
		h.EncodeSparse()
	}
}
