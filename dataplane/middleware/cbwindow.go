package middleware

import (
	"math"
	"time"
)

// Rolling statistics of the circuit breaker: 10 one-second buckets, each
// with a count per status code and a latency histogram whose bucket bounds
// grow by 10% from 1µs (about 300 s at the top).
const (
	winBuckets   = 10
	latBuckets   = 210
	latGrowthLog = 0.09531017980432493 // math.Log(1.1)
)

type window struct {
	b [winBuckets]second
}

type second struct {
	unix  int64 // the second this bucket holds; 0: empty
	codes map[int]int
	lat   [latBuckets]uint32
}

func (w *window) reset() { *w = window{} }

func latBucket(d time.Duration) int {
	us := float64(d.Microseconds())
	if us < 1 {
		return 0
	}
	return min(int(math.Log(us)/latGrowthLog)+1, latBuckets-1)
}

// latBound returns the upper bound of histogram bucket i, in ms.
func latBound(i int) float64 {
	if i == 0 {
		return 0.001
	}
	return math.Exp(float64(i)*latGrowthLog) / 1000
}

func (w *window) add(now time.Time, code int, lat time.Duration) {
	sec := now.Unix()
	s := &w.b[sec%winBuckets]
	if s.unix != sec {
		*s = second{unix: sec, codes: map[int]int{}}
	}
	s.codes[code]++
	s.lat[latBucket(lat)]++
}

func (w *window) live(now time.Time, s *second) bool {
	return s.unix != 0 && s.unix > now.Unix()-winBuckets
}

// counts returns the number of answers in the window and how many of them
// match.
func (w *window) counts(now time.Time, match func(int) bool) (total, matched int) {
	for i := range w.b {
		s := &w.b[i]
		if !w.live(now, s) {
			continue
		}
		for c, n := range s.codes {
			total += n
			if match(c) {
				matched += n
			}
		}
	}
	return total, matched
}

// quantile returns the latency at quantile q (0–100) in ms, 0 when empty.
func (w *window) quantile(now time.Time, q float64) float64 {
	var h [latBuckets]uint64
	var total uint64
	for i := range w.b {
		s := &w.b[i]
		if !w.live(now, s) {
			continue
		}
		for j, n := range s.lat {
			h[j] += uint64(n)
			total += uint64(n)
		}
	}
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(q / 100 * float64(total)))
	want = max(want, 1)
	var seen uint64
	for j, n := range h {
		seen += n
		if seen >= want {
			return latBound(j)
		}
	}
	return latBound(latBuckets - 1)
}
