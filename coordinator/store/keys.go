package store

import "encoding/binary"

// intervalKey is phase index (big-endian u16) then seq (big-endian u32), so
// a cursor yields a run's intervals phase by phase in time order.
func intervalKey(phase int, seq uint32) []byte {
	k := make([]byte, 6)
	binary.BigEndian.PutUint16(k, uint16(phase))
	binary.BigEndian.PutUint32(k[2:], seq)
	return k
}

// workerIntervalKey appends the worker name to intervalKey.
func workerIntervalKey(phase int, seq uint32, worker string) []byte {
	return append(intervalKey(phase, seq), worker...)
}

func parseIntervalKey(k []byte) (phase int, seq uint32, ok bool) {
	if len(k) < 6 {
		return 0, 0, false
	}
	return int(binary.BigEndian.Uint16(k)), binary.BigEndian.Uint32(k[2:]), true
}
