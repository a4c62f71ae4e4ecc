package coordinator

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// FuzzDecodeInterval feeds arbitrary wire bytes through everything the
// coordinator does with a worker's Interval before merging it: unmarshal,
// validate, decode histograms, and accumulate. Nothing may panic; an
// accepted interval's accumulated count must equal its histograms' counts.
// The seed corpus (testdata/fuzz) holds real intervals and near misses.
func FuzzDecodeInterval(f *testing.F) {
	at := time.Unix(1000, 0)
	for _, vals := range [][]int64{nil, {1}, {1000, 2000, 3e9}} {
		iv := workerInterval(f, 3, at, time.Second, vals)
		b, err := proto.Marshal(iv)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		// The same in the sparse wire encoding, as this coordinator asks.
		iv.Ops[0].Hdr = sparseOf(f, iv.GetOps()[0].GetHdr())
		if b, err = proto.Marshal(iv); err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, wire []byte) {
		iv := &writepathv1.Interval{}
		if proto.Unmarshal(wire, iv) != nil {
			return
		}
		var dec hist.Decoder
		ops, err := decodeInterval(&dec, iv)
		if err != nil {
			return
		}
		p := newPending(iv.GetSeq(), nil)
		if err := p.merge("w", iv, ops); err != nil {
			return
		}
		for op, s := range ops {
			if got := p.ops[op].Count(); got != s.Count() {
				t.Errorf("op %s: accumulated %d of %d values", op, got, s.Count())
			}
		}
	})
}
