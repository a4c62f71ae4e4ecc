package hist

import (
	"math"
	"math/bits"
)

// The shared geometry's bucket arithmetic, as HdrHistogram lays it out for
// Lowest 1 (unit magnitude 0) and SigFigs 3: single-unit resolution up to
// 2·10^3 needs 2048 sub-buckets (half count 1024); each further bucket
// doubles the value range and the step. A value's flat counts index is
// (bucket+1)·1024 + sub-bucket − 1024, the layout of HdrHistogram's V2
// encoding, so counts are encoded and decoded index for index. The package's
// tests check every function against hdrhistogram-go.
const (
	subHalfMag = 10              // log2 of the sub-bucket half count
	subHalf    = 1 << subHalfMag // 1024
	subCount   = 2 * subHalf     // 2048 sub-buckets per bucket
	subMask    = int64(subCount - 1)
	bucketCnt  = 32 // buckets to cover Highest: 2048·2^31 > 1 h in ns
	countsLen  = (bucketCnt + 1) * subHalf
	emptyLo    = countsLen // lo of an empty Histogram: above every index
)

// bucketOf is the lowest (finest) bucket that can hold v.
func bucketOf(v int64) int {
	return 64 - bits.LeadingZeros64(uint64(v|subMask)) - (subHalfMag + 1)
}

// indexOf is v's flat counts index; v must be in 0..Highest.
func indexOf(v int64) int {
	b := bucketOf(v)
	return (b+1)<<subHalfMag + int(v>>uint(b)) - subHalf
}

// valueAt is the lowest value of the bucket at flat index idx.
func valueAt(idx int) int64 {
	b := idx>>subHalfMag - 1
	s := idx&(subHalf-1) + subHalf
	if b < 0 {
		s -= subHalf
		b = 0
	}
	return int64(s) << uint(b)
}

// lowestEquivalent is the smallest value counted in v's bucket.
func lowestEquivalent(v int64) int64 {
	b := bucketOf(v)
	return (v >> uint(b)) << uint(b)
}

// rangeSize is the width of v's bucket.
func rangeSize(v int64) int64 {
	b := bucketOf(v)
	if v>>uint(b) >= subCount {
		b++
	}
	return 1 << uint(b)
}

// highestEquivalent is the largest value counted in v's bucket.
func highestEquivalent(v int64) int64 { return lowestEquivalent(v) + rangeSize(v) - 1 }

// medianEquivalent is the middle of v's bucket (what means are made of).
func medianEquivalent(v int64) int64 { return lowestEquivalent(v) + rangeSize(v)>>1 }

// percentileRank is the 1-based rank of percentile p among total values,
// clamped to [1, total], as HdrHistogram rounds it.
func percentileRank(p float64, total int64) int64 {
	if p > 100 {
		p = 100
	}
	rank := (p/100)*float64(total) + 0.5
	if !(rank >= 1) { // NaN, negative percentiles, ranks below the first value
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}

// addSat is a+b for non-negative a and b, or false when it would pass
// MaxInt64.
func addSat(a, b int64) (int64, bool) {
	if b > math.MaxInt64-a {
		return a, false
	}
	return a + b, true
}
