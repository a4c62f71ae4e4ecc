package coordinator

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/writepath/writepath/hist"
	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// TestDecodeIntervalRefusesHostileHistograms: every histogram payload a
// worker controls is checked before anything is merged.
func TestDecodeIntervalRefusesHostileHistograms(t *testing.T) {
	at := time.Unix(1000, 0)
	huge := hist.New()
	huge.RecordN(1000, maxOpCount+1)
	hugeHdr, err := huge.Encode()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		hdr  []byte
	}{
		{"oversize payload", bytes.Repeat([]byte{'A'}, hist.MaxEncodedSize+1)},
		{"not base64", []byte("!!!")},
		{"truncated", hugeHdr[:len(hugeHdr)/2]},
		{"count past the per-interval limit", hugeHdr},
	}
	for _, tt := range tests {
		iv := workerInterval(t, 0, at, time.Second, []int64{1})
		iv.Ops = []*writepathv1.OpHistogram{{Op: "write", Hdr: tt.hdr}}
		var dec hist.Decoder
		if _, err := decodeInterval(&dec, iv); !errors.Is(err, ErrBadInterval) {
			t.Errorf("%s: decodeInterval = %v; want ErrBadInterval", tt.name, err)
		}
	}
}

// TestOutOfOrderIntervalRefused: a worker's seq must grow; a repeat or a
// step back is refused (and the session that sent it is ended).
func TestOutOfOrderIntervalRefused(t *testing.T) {
	at := time.Now()
	m := newPhaseMerge("r", "load", 0, at, time.Second, time.Second, tempStore(t), []string{"a", "b"},
		func(*writepathv1.MergedInterval) {}, nil)
	defer m.flush()
	addOrFail(t, m, "a", workerInterval(t, 2, at, time.Second, []int64{1}), at)
	var dec hist.Decoder
	iv := workerInterval(t, 1, at, time.Second, []int64{1})
	ops, err := decodeInterval(&dec, iv)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.add("a", iv, ops, at); !errors.Is(err, ErrBadInterval) || errors.Is(err, errStale) {
		t.Errorf("seq 1 after 2: add = %v; want ErrBadInterval, not stale", err)
	}
}
