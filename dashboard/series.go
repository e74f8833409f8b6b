package dashboard

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/observe"
)

// Ring sizes of the live charts: the last 15 minutes at one sample per
// StatsInterval (one second by default), and the last 24 hours at one
// sample per minute.
const (
	fineSamples   = 15 * 60
	coarseSamples = 24 * 60
	coarseStep    = time.Minute
)

// MaxSeries bounds how many objects (routers and services) keep a chart
// history; each costs (fineSamples+coarseSamples)×20 bytes ≈ 46 KiB. Objects
// beyond it still get live rates on the WebSocket, without history.
const MaxSeries = 1024

// point is one sample of one series; float32 halves the ring's memory and
// is far finer than a chart's pixels.
type point struct{ rps, c4xx, c5xx, p50, p99 float32 }

func pointOf(r observe.Rate) point {
	return point{float32(r.RequestsPerSecond), float32(r.ClientErrorsPerSecond), float32(r.ErrorsPerSecond), float32(r.P50Ms), float32(r.P99Ms)}
}

// ring is a fixed-size circular buffer of samples shared by every series:
// times[i] is when sample i of every series was taken.
type ring struct {
	times  []int64 // unix milliseconds; 0 = empty slot
	next   int     // slot the next sample goes to
	series map[string][]point
}

func newRing(n int) *ring { return &ring{times: make([]int64, n), series: map[string][]point{}} }

// add records rates (by series key) taken at at. Series not in rates get a
// zero sample; series beyond MaxSeries are not kept.
func (r *ring) add(at time.Time, rates map[string]observe.Rate) {
	i := r.next
	r.times[i] = at.UnixMilli()
	r.next = (i + 1) % len(r.times)
	for k, pts := range r.series {
		if _, ok := rates[k]; !ok {
			pts[i] = point{}
		}
	}
	for k, rate := range rates {
		pts, ok := r.series[k]
		if !ok {
			if len(r.series) >= MaxSeries {
				continue
			}
			pts = make([]point, len(r.times))
			r.series[k] = pts
		}
		pts[i] = pointOf(rate)
	}
}

// drop removes series for which keep is false.
func (r *ring) drop(keep func(key string) bool) {
	for k := range r.series {
		if !keep(k) {
			delete(r.series, k)
		}
	}
}

// Series is one chart's data, oldest first, as columns: T are unix
// milliseconds; RPS, ClientErrors (4xx/s) and ServerErrors (5xx/s) are
// rates per second over the step; P50 and P99 are latencies in ms.
type Series struct {
	Key          string    `json:"series"`
	StepMs       int64     `json:"stepMs"`
	T            []int64   `json:"t"`
	RPS          []float32 `json:"rps"`
	ClientErrors []float32 `json:"e4xx"`
	ServerErrors []float32 `json:"e5xx"`
	P50          []float32 `json:"p50"`
	P99          []float32 `json:"p99"`
}

func (r *ring) read(key string, step time.Duration) Series {
	s := Series{Key: key, StepMs: step.Milliseconds(), T: []int64{}, RPS: []float32{}, ClientErrors: []float32{}, ServerErrors: []float32{}, P50: []float32{}, P99: []float32{}}
	pts := r.series[key]
	for j := range len(r.times) {
		i := (r.next + j) % len(r.times)
		if r.times[i] == 0 {
			continue
		}
		var p point
		if pts != nil {
			p = pts[i]
		}
		s.T = append(s.T, r.times[i])
		s.RPS = append(s.RPS, p.rps)
		s.ClientErrors = append(s.ClientErrors, p.c4xx)
		s.ServerErrors = append(s.ServerErrors, p.c5xx)
		s.P50 = append(s.P50, p.p50)
		s.P99 = append(s.P99, p.p99)
	}
	return s
}

// Series keys: the proxy total, and one per router and per service.
const keyTotal = "total"

func routerKey(name string) string  { return "router:" + name }
func serviceKey(name string) string { return "service:" + name }

// Stats is one sampling of every live rate: what a "stats" WebSocket
// message carries, and what one slot of the fine ring holds. Servers are
// keyed by server URL (each attempt on it, observe.Live); they have no
// chart history.
//
// Seq numbers the samples from 1: a client that sees one skipped fell
// behind (a WebSocket loop sends the latest sample when it wakes) and
// re-reads /api/series for what it missed. Omitted is set on a stats
// message that left objects out (MaxStatsObjects).
type Stats struct {
	Seq      uint64                  `json:"seq"`
	At       time.Time               `json:"at"`
	Total    observe.Rate            `json:"total"`
	Routers  map[string]observe.Rate `json:"routers"`
	Services map[string]observe.Rate `json:"services"`
	Servers  map[string]observe.Rate `json:"servers"`
	Omitted  *Omitted                `json:"omitted,omitempty"`
}

// Sampler turns Live's counters into the chart rings: every interval it
// takes a snapshot, computes the rates since the previous one, stores them
// and wakes the WebSocket loops. Every coarseStep it also stores the rates
// over the whole minute (percentiles from the minute's histogram, not an
// average of per-second percentiles).
//
// A process owns one Sampler (NewSampler, Run) and hands it to each API it
// builds (Options.Sampler), so the charts' history and the live rates
// survive the API being rebuilt by a static reload.
type Sampler struct {
	live     *observe.Live
	interval time.Duration
	now      func() time.Time

	mu       sync.Mutex
	fine     *ring
	coarse   *ring
	prev     observe.Snapshot // last fine sample
	spare    observe.Snapshot // the one before, reused for the next
	minute   observe.Snapshot // start of the current coarse step (its own copy)
	latest   Stats
	seq      uint64                  // samples taken
	changed  chan struct{}           // closed and replaced at each sample
	keys     map[string]observe.Rate // reused by ratesByKey
	keyCache map[[2]string]string    // series keys, built once per object
}

// NewSampler returns a sampler of live every interval (default 1s; the
// charts' resolution) by the clock now (nil: time.Now). Run drives it.
func NewSampler(live *observe.Live, interval time.Duration, now func() time.Time) *Sampler {
	if interval <= 0 {
		interval = time.Second
	}
	if now == nil {
		now = time.Now
	}
	s := &Sampler{live: live, interval: interval, now: now, fine: newRing(fineSamples), coarse: newRing(coarseSamples), changed: make(chan struct{})}
	s.prev = live.Snapshot(now())
	s.minute = copySnapshot(observe.Snapshot{}, s.prev)
	return s
}

// copySnapshot copies src into dst's storage (dst must not share maps or
// slices with src).
func copySnapshot(dst, src observe.Snapshot) observe.Snapshot {
	cp := func(dm, sm map[string]observe.Counts) map[string]observe.Counts {
		if dm == nil {
			dm = map[string]observe.Counts{}
		}
		for k := range dm {
			if _, ok := sm[k]; !ok {
				delete(dm, k)
			}
		}
		for k, c := range sm {
			d := dm[k]
			d.Requests, d.ClientErrors, d.Errors = c.Requests, c.ClientErrors, c.Errors
			d.Buckets = append(d.Buckets[:0], c.Buckets...)
			dm[k] = d
		}
		return dm
	}
	dst.At = src.At
	dst.Total.Requests, dst.Total.ClientErrors, dst.Total.Errors = src.Total.Requests, src.Total.ClientErrors, src.Total.Errors
	dst.Total.Buckets = append(dst.Total.Buckets[:0], src.Total.Buckets...)
	dst.Routers = cp(dst.Routers, src.Routers)
	dst.Services = cp(dst.Services, src.Services)
	dst.Servers = cp(dst.Servers, src.Servers)
	return dst
}

// ratesByKey computes the rates from prev to cur, as Stats (fresh maps:
// they are handed to the WebSocket loops) and by series key into the
// sampler's reused keys map.
func (s *Sampler) ratesByKey(d time.Duration, prev, cur observe.Snapshot) (map[string]observe.Rate, Stats) {
	st := Stats{
		At:       cur.At,
		Total:    observe.RateOf(d, prev.Total, cur.Total),
		Routers:  observe.RatesOf(d, prev.Routers, cur.Routers),
		Services: observe.RatesOf(d, prev.Services, cur.Services),
		Servers:  observe.RatesOf(d, prev.Servers, cur.Servers),
	}
	if s.keys == nil {
		s.keys = map[string]observe.Rate{}
	}
	clear(s.keys)
	s.keys[keyTotal] = st.Total
	for n, r := range st.Routers {
		s.keys[s.key("router:", n)] = r
	}
	for n, r := range st.Services {
		s.keys[s.key("service:", n)] = r
	}
	return s.keys, st
}

// key returns prefix+name, built once per object.
func (s *Sampler) key(prefix, name string) string {
	if s.keyCache == nil {
		s.keyCache = map[[2]string]string{}
	}
	k := [2]string{prefix, name}
	v, ok := s.keyCache[k]
	if !ok {
		v = prefix + name
		s.keyCache[k] = v
	}
	return v
}

// sample takes one sample now.
func (s *Sampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := &s.spare // reuse the snapshot two samples old
	s.live.SnapshotInto(cur, s.now())
	keys, st := s.ratesByKey(cur.At.Sub(s.prev.At), s.prev, *cur)
	s.fine.add(cur.At, keys)
	s.seq++
	st.Seq = s.seq
	s.latest = st
	if d := cur.At.Sub(s.minute.At); d >= coarseStep {
		ck, _ := s.ratesByKey(d, s.minute, *cur)
		s.coarse.add(cur.At, ck)
		s.minute = copySnapshot(s.minute, *cur)
	}
	s.prev, s.spare = *cur, s.prev
	close(s.changed)
	s.changed = make(chan struct{})
}

// Run samples every interval until done is closed; after each swap of
// tables it drops the counters and history of the routers and services the
// new configuration no longer has, so a churning configuration does not
// accumulate them. Run once per Sampler.
func (s *Sampler) Run(done <-chan struct{}, tables Tables) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	tbl := tables.Current()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			s.sample()
		case <-tbl.Replaced():
			tbl = tables.Current()
			s.forgetMissing(tbl)
		}
	}
}

// forgetMissing forgets what tbl's configuration does not define (internal
// objects are always kept).
func (s *Sampler) forgetMissing(tbl Table) {
	var routers, services, servers map[string]bool
	if c := tbl.Merged().Config; c != nil && c.HTTP != nil {
		routers, services, servers = map[string]bool{}, map[string]bool{}, map[string]bool{}
		for n := range c.HTTP.Routers {
			routers[n] = true
		}
		for n, svc := range c.HTTP.Services {
			services[n] = true
			if svc != nil && svc.LoadBalancer != nil {
				for _, srv := range svc.LoadBalancer.Servers {
					servers[serverKey(srv.URL)] = true
				}
			}
		}
	}
	keep := func(set map[string]bool) func(string) bool {
		return func(n string) bool { return set[n] || strings.HasSuffix(n, "@internal") }
	}
	s.forget(keep(routers), keep(services), func(u string) bool { return servers[serverKey(u)] })
}

// serverKey is how a server URL is compared: as the dataplane names it
// (the parsed URL, re-encoded), so "http://a:80" written either way is
// one server.
func serverKey(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.String()
	}
	return raw
}

// Changed returns a channel closed at the next sample.
func (s *Sampler) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Latest returns the last sample's rates.
func (s *Sampler) Latest() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest
}

// forget drops the live counters and chart history of routers, services
// and servers that no longer exist (after a swap).
func (s *Sampler) forget(routerExists, serviceExists, serverExists func(string) bool) {
	s.live.Forget(func(kind, name string) bool {
		switch kind {
		case "router":
			return routerExists(name)
		case "server":
			return serverExists(name)
		}
		return serviceExists(name)
	})
	keep := func(k string) bool {
		switch {
		case k == keyTotal:
			return true
		case len(k) > 7 && k[:7] == "router:":
			return routerExists(k[7:])
		case len(k) > 8 && k[:8] == "service:":
			return serviceExists(k[8:])
		}
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fine.drop(keep)
	s.coarse.drop(keep)
	for k, v := range s.keyCache {
		if !keep(v) {
			delete(s.keyCache, k)
		}
	}
}

// read returns a series: rng "15m" (the fine ring, default) or "24h".
func (s *Sampler) read(key, rng string) Series {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rng == "24h" {
		return s.coarse.read(key, coarseStep)
	}
	return s.fine.read(key, s.interval)
}

// getSeries is GET /api/series?router=NAME | service=NAME [&range=15m|24h]:
// the chart history of one router, one service, or (with neither) the
// whole proxy. An object with no traffic yet reads as zeros; 503 without
// live statistics.
func (a *API) getSeries(w http.ResponseWriter, r *http.Request) {
	if a.sampler == nil {
		writeError(w, http.StatusServiceUnavailable, "no live statistics")
		return
	}
	q := r.URL.Query()
	rng := q.Get("range")
	if rng != "" && rng != "15m" && rng != "24h" {
		writeError(w, http.StatusBadRequest, "range: "+rng+" is not 15m or 24h")
		return
	}
	key := keyTotal
	switch {
	case q.Get("router") != "":
		key = routerKey(q.Get("router"))
	case q.Get("service") != "":
		key = serviceKey(q.Get("service"))
	}
	writeJSON(w, http.StatusOK, a.sampler.read(key, rng))
}
