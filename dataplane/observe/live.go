package observe

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/dataplane"
)

// latencyBounds are the upper bounds of Live's latency buckets, growing by
// 25% from 50µs to about 2 minutes; a latency above the last bound lands in
// an overflow bucket reported as the last bound.
var latencyBounds = func() []time.Duration {
	var b []time.Duration
	for d := 50 * time.Microsecond; d < 2*time.Minute; d = d * 5 / 4 {
		b = append(b, d)
	}
	return b
}()

// Live keeps cumulative per-router counters for the dashboard's live view:
// requests, server errors (status >= 500) and a latency histogram. Request
// does one sync.Map lookup and a few atomic adds; it never locks once a
// router has been seen. Readers take a Snapshot and compute rates and
// percentiles from the difference of two snapshots (Rates).
type Live struct {
	routers sync.Map // router name -> *routerStats
}

type routerStats struct {
	requests atomic.Int64
	errors   atomic.Int64
	buckets  []atomic.Int64 // len(latencyBounds)+1
}

// NewLive returns an empty Live.
func NewLive() *Live { return &Live{} }

// Request implements dataplane.Observer. Requests that matched no router are
// not counted.
func (l *Live) Request(ev *dataplane.RequestEvent) {
	if ev.Router == "" {
		return
	}
	v, ok := l.routers.Load(ev.Router)
	if !ok {
		v, _ = l.routers.LoadOrStore(ev.Router, &routerStats{buckets: make([]atomic.Int64, len(latencyBounds)+1)})
	}
	s := v.(*routerStats)
	s.requests.Add(1)
	if ev.Status >= 500 {
		s.errors.Add(1)
	}
	i, _ := slices.BinarySearch(latencyBounds, ev.Duration)
	s.buckets[i].Add(1)
}

// Conn implements dataplane.Observer; Live ignores connections.
func (l *Live) Conn(string, string, int) {}

// Forget drops the counters of routers not in keep; the dashboard calls it
// after a swap so removed routers do not accumulate.
func (l *Live) Forget(keep func(router string) bool) {
	l.routers.Range(func(k, _ any) bool {
		if !keep(k.(string)) {
			l.routers.Delete(k)
		}
		return true
	})
}

// Counts is one router's cumulative counters at one moment.
type Counts struct {
	Requests int64
	Errors   int64
	Buckets  []int64 // per latency bucket
}

// Snapshot is every router's cumulative counters at At.
type Snapshot struct {
	At      time.Time
	Routers map[string]Counts
}

// Snapshot copies the current counters. It allocates and may run
// concurrently with Request.
func (l *Live) Snapshot(at time.Time) Snapshot {
	s := Snapshot{At: at, Routers: map[string]Counts{}}
	l.routers.Range(func(k, v any) bool {
		rs := v.(*routerStats)
		c := Counts{Requests: rs.requests.Load(), Errors: rs.errors.Load(), Buckets: make([]int64, len(rs.buckets))}
		for i := range rs.buckets {
			c.Buckets[i] = rs.buckets[i].Load()
		}
		s.Routers[k.(string)] = c
		return true
	})
	return s
}

// Rate is one router's traffic between two snapshots.
type Rate struct {
	// RequestsPerSecond and ErrorsPerSecond are rates over the interval;
	// ErrorRatio is errors/requests (0 when there were no requests).
	RequestsPerSecond float64 `json:"rps"`
	ErrorsPerSecond   float64 `json:"errorsPerSecond"`
	ErrorRatio        float64 `json:"errorRatio"`
	// P50Ms and P99Ms are latency percentiles in milliseconds, as the upper
	// bound of the bucket holding that rank (at most 25% above the truth);
	// 0 when there were no requests.
	P50Ms float64 `json:"p50ms"`
	P99Ms float64 `json:"p99ms"`
}

// Rates returns per-router rates between prev and cur (cur later than
// prev). Routers with no traffic in the interval are included with zero
// rates when they exist in cur.
func Rates(prev, cur Snapshot) map[string]Rate {
	secs := cur.At.Sub(prev.At).Seconds()
	out := make(map[string]Rate, len(cur.Routers))
	for name, c := range cur.Routers {
		p := prev.Routers[name]
		reqs := c.Requests - p.Requests
		errs := c.Errors - p.Errors
		if reqs < 0 { // counters were reset (Forget, then seen again)
			p, reqs, errs = Counts{}, c.Requests, c.Errors
		}
		var r Rate
		if secs > 0 {
			r.RequestsPerSecond = float64(reqs) / secs
			r.ErrorsPerSecond = float64(errs) / secs
		}
		if reqs > 0 {
			r.ErrorRatio = float64(errs) / float64(reqs)
			delta := make([]int64, len(c.Buckets))
			for i := range c.Buckets {
				delta[i] = c.Buckets[i]
				if i < len(p.Buckets) {
					delta[i] -= p.Buckets[i]
				}
			}
			r.P50Ms = percentile(delta, reqs, 0.50)
			r.P99Ms = percentile(delta, reqs, 0.99)
		}
		out[name] = r
	}
	return out
}

func percentile(buckets []int64, total int64, q float64) float64 {
	rank := int64(math.Ceil(q * float64(total)))
	var seen int64
	for i, n := range buckets {
		seen += n
		if seen >= rank {
			if i >= len(latencyBounds) {
				i = len(latencyBounds) - 1
			}
			return float64(latencyBounds[i]) / float64(time.Millisecond)
		}
	}
	return float64(latencyBounds[len(latencyBounds)-1]) / float64(time.Millisecond)
}
