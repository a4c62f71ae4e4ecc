package blocktrace

import "github.com/writepath/writepath/hist"

// The programs bucket values by hdrhistogram's counts index for package
// hist's geometry (unit 1, 2048 sub-buckets): bucket b = ilog2(v) - 10 (0
// below 2048), index b·1024 + v>>b. hdrIndex is that function in Go (the
// kernel's is compared with it by TestKernelIndexMatchesHist) and
// indexValue its inverse: the lowest value of the index's bucket, which
// hist records into the same bucket.
const (
	subMagnitude = 10
	// overflowIndex stands for a value above hist.Highest.
	overflowIndex = 0xffff
)

func hdrIndex(v uint64) uint32 {
	if v > uint64(hist.Highest) {
		return overflowIndex
	}
	if v < 2<<subMagnitude {
		return uint32(v)
	}
	b := uint32(ilog2(v)) - subMagnitude
	return b<<subMagnitude + uint32(v>>b)
}

func ilog2(v uint64) int {
	n := -1
	for v != 0 {
		v >>= 1
		n++
	}
	return n
}

// indexValue is the lowest value whose hdrIndex is idx; for overflowIndex
// it is just above hist.Highest, which hist counts as overflow.
func indexValue(idx uint32) int64 {
	if idx == overflowIndex {
		return hist.Highest + 1
	}
	if idx < 2<<subMagnitude {
		return int64(idx)
	}
	b := idx>>subMagnitude - 1
	s := idx - b<<subMagnitude
	return int64(s) << b
}
