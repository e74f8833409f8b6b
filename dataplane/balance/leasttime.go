package balance

import (
	"errors"
	"math"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Latency is the time-to-first-byte record of one server, kept by the
// Pool per server origin (Pool.Latency) so that it carries over configuration swaps and is
// shared by every service using the server. Lock-free.
type Latency struct {
	ewma      atomic.Uint64 // math.Float64bits of the smoothed TTFB in ns; 0: no sample yet
	lastPick  atomic.Int64  // unix ns of the last request sent (pick or probe)
	lastStamp atomic.Int64  // unix ns of the last sample
}

// Least-time tuning. Traefik averages the last 100 TTFB samples equally
// (pkg/server/service/loadbalancer/leasttime); Gantry uses an EWMA whose
// weight grows with the time since the previous sample, so a busy server
// adapts within ~10 samples and a sample taken after a quiet period almost
// replaces the old value.
const (
	// ltAlpha is the minimum weight of a new sample.
	ltAlpha = 0.1
	// ltDecay is the time constant of the time-based weight: a sample
	// arriving Δt after the previous one weighs max(ltAlpha, 1-e^(-Δt/ltDecay)).
	ltDecay = time.Second
	// ltProbeAfter is how long a server may go without a request while the
	// service takes traffic before it is sent one (the probe), so a server
	// that was slow once is measured again (Traefik's strategy never picks
	// it again: its average only changes when it gets a request).
	ltProbeAfter = 2 * time.Second
	// ltFloor is the cost of each request in flight on top of the TTFB
	// term, so that a server with no sample yet still counts its requests
	// in flight (Traefik's score is 0 × in-flight there, so every
	// concurrent request lands on it until its first answer).
	ltFloor = float64(100 * time.Microsecond)
)

// observe records a TTFB of d measured at now.
func (s *Latency) observe(d time.Duration, now int64) {
	prev := s.lastStamp.Swap(now)
	a := ltAlpha
	if prev > 0 {
		if w := 1 - math.Exp(-float64(now-prev)/float64(ltDecay)); w > a {
			a = w
		}
	} else {
		a = 1
	}
	for {
		old := s.ewma.Load()
		v := float64(d)
		if old != 0 {
			v = (1-a)*math.Float64frombits(old) + a*v
		}
		if v <= 0 {
			v = 1 // keep "sampled" distinct from "no sample"
		}
		if s.ewma.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}

// ttfb returns the smoothed TTFB in ns, 0 when there is no sample.
func (s *Latency) ttfb() float64 { return math.Float64frombits(s.ewma.Load()) }

// LeastTime is loadBalancer.strategy leasttime (Traefik v3.6): the
// available server with the lowest (TTFB × (1 + in flight) + floor × in
// flight) / weight wins; equal scores go to the server that comes first in
// the smooth-WRR rotation, so ties are shared by weight. A server not sent a
// request for ltProbeAfter while the others are gets the next one, once.
// Weight-0 servers are never picked. In-flight counts are the backend's,
// shared by every service using the server.
//
// Differences from Traefik, deliberate: TTFB is an EWMA (see ltAlpha)
// rather than a 100-sample mean; failed attempts (dial errors, resets) add
// no sample (passive health is their business) except timeouts, which
// count with the time waited; the probe and the floor above.
// Source: https://doc.traefik.io/traefik/reference/routing-configuration/http/load-balancing/service/#strategy
type LeastTime struct {
	servers []*Server // weight > 0
	stats   []*Latency
	seq     []int32 // smooth WRR over servers, for tie-breaking
	next    atomic.Uint64
	now     func() int64
}

// NewLeastTime returns the least-time picker over servers (all of weight
// > 0), stats[i] being the record of servers[i] (Pool.Latency).
func NewLeastTime(servers []*Server, stats []*Latency) *LeastTime {
	p := &LeastTime{servers: servers, stats: stats, now: nowNano}
	w := make([]int, len(servers))
	for i, s := range servers {
		w[i] = s.Weight
	}
	p.seq = smoothSequence(w)
	return p
}

// Pick implements Picker.
func (p *LeastTime) Pick(*http.Request) (int, error) {
	n := len(p.servers)
	if n == 0 || len(p.seq) == 0 {
		return -1, ErrNoBackend
	}
	now := p.now()
	start := int(p.seq[(p.next.Add(1)-1)%uint64(len(p.seq))])
	best, bestScore := -1, math.Inf(1)
	for k := range n {
		i := (start + k) % n
		srv := p.servers[i]
		if !srv.Pickable() {
			continue
		}
		s := p.stats[i]
		if last := s.lastPick.Load(); s.ttfb() > 0 && now-max(last, s.lastStamp.Load()) > int64(ltProbeAfter) {
			// Probe: measure a server left alone for a while. Only the
			// request that wins the swap probes.
			if s.lastPick.CompareAndSwap(last, now) {
				return i, nil
			}
		}
		inflight := float64(srv.Backend.inflight.Load())
		score := (s.ttfb()*(1+inflight) + ltFloor*inflight) / float64(srv.Weight)
		if score < bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return -1, ErrNoBackend
	}
	p.stats[best].lastPick.Store(now)
	return best, nil
}

// Record notes the outcome of one attempt on server i (an index Pick
// returned) that started at start: the TTFB when the server answered, the
// time waited when it timed out; other failures add no sample.
func (p *LeastTime) Record(i int, ttfb time.Duration, err error, start time.Time) {
	s := p.stats[i]
	switch {
	case err == nil && ttfb > 0:
		s.observe(ttfb, start.Add(ttfb).UnixNano())
	case err != nil && isTimeout(err):
		now := time.Now()
		s.observe(now.Sub(start), now.UnixNano())
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
