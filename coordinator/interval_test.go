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

// TestPingPacer: a streaming worker is pinged every timeout/2 at most (at
// the defaults every 2nd tick); a silent one every tick, at once.
func TestPingPacer(t *testing.T) {
	for _, tc := range []struct {
		name              string
		interval, timeout time.Duration
		streamed          string // per tick: s streamed, - silent
		want              string // per tick: p pinged, . skipped
	}{
		{"defaults", time.Second, 5 * time.Second, "ssssss-s--s", ".p.p.pp.pp."},
		{"timeout under two intervals", time.Second, 1500 * time.Millisecond, "ssss", "pppp"},
		{"fast heartbeat", 100 * time.Millisecond, 3 * time.Second, "ssssssssssssssssssssssssssssssssss", "..............p..............p...."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPingPacer(tc.interval, tc.timeout)
			var got []byte
			for _, c := range tc.streamed {
				if p.due(c == 's') {
					got = append(got, 'p')
				} else {
					got = append(got, '.')
				}
			}
			if string(got) != tc.want {
				t.Errorf("pings %s; want %s", got, tc.want)
			}
		})
	}
}
