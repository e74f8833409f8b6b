package observe

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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

// Live keeps cumulative counters for the dashboard's live view, for the
// whole proxy, each router, each service and each server: requests, client
// errors (4xx), server errors (5xx) and a latency histogram. A server's
// counters are its attempts (RequestEvent.Attempts: a retried request
// counts once on each server tried, with the status that server gave), by
// server URL across every service that names it. Request does two
// sync.Map lookups plus one per attempt and a few atomic adds; it never
// locks or allocates once a router, service and server have been seen. Readers take a Snapshot and
// compute rates and percentiles from the difference of two (Rates).
//
// The proxy total counts every request the entrypoints answered, routed or
// not, except those served by Gantry's own services (…@internal: the
// dashboard's API calls, metric scrapes), as Traefik's addInternals=false.
type Live struct {
	total    stats
	routers  sync.Map // router name -> *stats
	services sync.Map // service name -> *stats
	servers  sync.Map // server URL (Attempt.Upstream) -> *stats
}

type stats struct {
	requests, client, server atomic.Int64
	buckets                  [numBuckets]atomic.Int64
}

// numBuckets is len(latencyBounds)+1 (overflow); checked in init.
const numBuckets = 67

func init() {
	if len(latencyBounds)+1 != numBuckets {
		panic("observe: numBuckets must be len(latencyBounds)+1")
	}
}

func (s *stats) add(status int, bucket int) {
	s.requests.Add(1)
	switch {
	case status >= 500:
		s.server.Add(1)
	case status >= 400:
		s.client.Add(1)
	}
	s.buckets[bucket].Add(1)
}

// counts reads the counters into c, reusing c.Buckets when it has room.
func (s *stats) counts(c Counts) Counts {
	c.Requests, c.ClientErrors, c.Errors = s.requests.Load(), s.client.Load(), s.server.Load()
	if cap(c.Buckets) < numBuckets {
		c.Buckets = make([]int64, numBuckets)
	}
	c.Buckets = c.Buckets[:numBuckets]
	for i := range s.buckets {
		c.Buckets[i] = s.buckets[i].Load()
	}
	return c
}

// NewLive returns an empty Live.
func NewLive() *Live { return &Live{} }

func lookup(m *sync.Map, name string) *stats {
	v, ok := m.Load(name)
	if !ok {
		v, _ = m.LoadOrStore(name, &stats{})
	}
	return v.(*stats)
}

// Request implements Observer.
func (l *Live) Request(ev *RequestEvent) {
	i, _ := slices.BinarySearch(latencyBounds, ev.Duration)
	if ev.Router != "" {
		lookup(&l.routers, ev.Router).add(ev.Status, i)
	}
	if ev.Service != "" {
		lookup(&l.services, ev.Service).add(ev.ServiceStatus(), i)
	}
	for i := range ev.Attempts {
		a := &ev.Attempts[i]
		if a.Upstream == "" {
			continue
		}
		j, _ := slices.BinarySearch(latencyBounds, a.Duration)
		lookup(&l.servers, a.Upstream).add(a.Status, j)
	}
	for _, c := range ev.Calls {
		j, _ := slices.BinarySearch(latencyBounds, c.Duration)
		lookup(&l.services, c.Service).add(c.Status, j)
	}
	if !ev.Internal() {
		l.total.add(ev.Status, i)
	}
}

// Conn implements Observer; Live ignores connections.
func (l *Live) Conn(string, string, int) {}

// Forget drops the counters of routers and services for which keep returns
// false; the dashboard calls it after a swap so removed objects do not
// accumulate. kind is "router", "service" or "server" (name: its URL).
func (l *Live) Forget(keep func(kind, name string) bool) {
	for kind, m := range map[string]*sync.Map{"router": &l.routers, "service": &l.services, "server": &l.servers} {
		m.Range(func(k, _ any) bool {
			if !keep(kind, k.(string)) {
				m.Delete(k)
			}
			return true
		})
	}
}

// Counts is one object's cumulative counters at one moment.
type Counts struct {
	Requests     int64
	ClientErrors int64   // status 400-499
	Errors       int64   // status >= 500
	Buckets      []int64 // per latency bucket
}

// Snapshot is every counter at At; Servers are keyed by server URL.
type Snapshot struct {
	At       time.Time
	Total    Counts
	Routers  map[string]Counts
	Services map[string]Counts
	Servers  map[string]Counts
}

// Snapshot copies the current counters. It allocates and may run
// concurrently with Request.
func (l *Live) Snapshot(at time.Time) Snapshot {
	var s Snapshot
	l.SnapshotInto(&s, at)
	return s
}

// SnapshotInto is Snapshot reusing dst's maps and bucket slices (a sampler
// alternating two snapshots allocates only for new objects).
func (l *Live) SnapshotInto(dst *Snapshot, at time.Time) {
	dst.At = at
	dst.Total = l.total.counts(dst.Total)
	copyAll := func(m *sync.Map, out *map[string]Counts) {
		if *out == nil {
			*out = map[string]Counts{}
		}
		seen := 0
		m.Range(func(k, v any) bool {
			name := k.(string)
			(*out)[name] = v.(*stats).counts((*out)[name])
			seen++
			return true
		})
		if seen != len(*out) { // objects were forgotten: drop their entries
			for name := range *out {
				if _, ok := m.Load(name); !ok {
					delete(*out, name)
				}
			}
		}
	}
	copyAll(&l.routers, &dst.Routers)
	copyAll(&l.services, &dst.Services)
	copyAll(&l.servers, &dst.Servers)
}

// Rate is one object's traffic between two snapshots.
type Rate struct {
	// RequestsPerSecond, ClientErrorsPerSecond (4xx) and ErrorsPerSecond
	// (5xx) are rates over the interval; ErrorRatio is 5xx/requests (0 when
	// there were no requests).
	RequestsPerSecond     float64 `json:"rps"`
	ClientErrorsPerSecond float64 `json:"clientErrorsPerSecond"`
	ErrorsPerSecond       float64 `json:"errorsPerSecond"`
	ErrorRatio            float64 `json:"errorRatio"`
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
	return RatesOf(cur.At.Sub(prev.At), prev.Routers, cur.Routers)
}

// RatesOf returns the rate of each object in cur against prev over d.
func RatesOf(d time.Duration, prev, cur map[string]Counts) map[string]Rate {
	out := make(map[string]Rate, len(cur))
	for name, c := range cur {
		out[name] = RateOf(d, prev[name], c)
	}
	return out
}

// RateOf is the rate from p to c over d. A counter that went backwards
// (Forget, then seen again) counts from zero.
func RateOf(d time.Duration, p, c Counts) Rate {
	secs := d.Seconds()
	reqs := c.Requests - p.Requests
	if reqs < 0 {
		p, reqs = Counts{}, c.Requests
	}
	cerrs, errs := c.ClientErrors-p.ClientErrors, c.Errors-p.Errors
	var r Rate
	if secs > 0 {
		r.RequestsPerSecond = float64(reqs) / secs
		r.ClientErrorsPerSecond = float64(cerrs) / secs
		r.ErrorsPerSecond = float64(errs) / secs
	}
	if reqs > 0 {
		r.ErrorRatio = float64(errs) / float64(reqs)
		r.P50Ms = percentile(p.Buckets, c.Buckets, reqs, 0.50)
		r.P99Ms = percentile(p.Buckets, c.Buckets, reqs, 0.99)
	}
	return r
}

// percentile is the q-quantile of the latencies counted between prev and
// cur (per-bucket differences), without allocating.
func percentile(prev, cur []int64, total int64, q float64) float64 {
	rank := int64(math.Ceil(q * float64(total)))
	var seen int64
	for i, n := range cur {
		if i < len(prev) {
			n -= prev[i]
		}
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
