package balance

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/internal/workgroup"
)

// Pool holds the servers' state that survives configuration generations:
// backends (in-flight counts, passive health) keyed by server origin,
// active health checkers keyed by (origin, check configuration,
// transport), and the least-time record of each backend. Each is
// ref-counted by the generations using it: a new generation acquires
// before the old one releases, so state carries over a swap.
//
// All methods are safe for concurrent use. The Pool owns the checker
// goroutines and those of mirrored requests (NewMirroring); Close stops
// them and waits.
type Pool struct {
	log *slog.Logger

	// work holds the checker goroutines and the mirrored requests; its
	// context is theirs.
	work *workgroup.Group

	mu        sync.Mutex
	backends  map[string]*Backend
	checkers  map[string]*Checker
	latencies map[string]*Latency // by backend key, for leasttime; dropped with the backend

	changed atomic.Pointer[chan struct{}] // closed and replaced at each health change
}

// NewPool returns an empty Pool. log must not be nil.
func NewPool(log *slog.Logger) *Pool {
	p := &Pool{
		log:       log,
		work:      workgroup.New(),
		backends:  map[string]*Backend{},
		checkers:  map[string]*Checker{},
		latencies: map[string]*Latency{},
	}
	ch := make(chan struct{})
	p.changed.Store(&ch)
	return p
}

// Close stops every health checker and cancels mirrored requests, and
// waits for them all; none starts after. Safe to call more than once.
func (p *Pool) Close() { p.work.Close() }

// BackendStatus is one server as the dashboard and API show it.
type BackendStatus struct {
	// URL is the server origin (scheme://host:port).
	URL string `json:"url"`
	// Services are the qualified services using the server, sorted.
	Services []string `json:"services"`
	// Up is false while an active check fails or passive health has taken
	// the server out (Traefik serverStatus DOWN).
	Up       bool  `json:"up"`
	InFlight int64 `json:"inFlight"`
	// LastError is the last health-check or forwarding error, "" if none.
	LastError string `json:"lastError,omitempty"`
	// LastCheck is when an active check last completed; zero if none ran.
	LastCheck time.Time `json:"lastCheck,omitzero"`
}

// Status returns every backend in use, sorted by URL.
func (p *Pool) Status() []BackendStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now().UnixNano()
	byURL := map[string]*BackendStatus{}
	out := make([]BackendStatus, 0, len(p.backends))
	for _, b := range p.backends {
		s := BackendStatus{URL: b.key, Up: b.passiveUp(func() int64 { return now }), InFlight: b.inflight.Load()}
		for svc := range b.services {
			s.Services = append(s.Services, svc)
		}
		slices.Sort(s.Services)
		if e := b.lastErr.Load(); e != nil {
			s.LastError = *e
		}
		out = append(out, s)
	}
	for i := range out {
		byURL[out[i].URL] = &out[i]
	}
	for _, c := range p.checkers {
		s := byURL[c.origin]
		if s == nil {
			continue
		}
		if !c.up.Load() {
			s.Up = false
		}
		if e := c.lastErr.Load(); e != nil {
			s.LastError = *e
		}
		if lc := c.lastCheck.Load(); lc != 0 && time.Unix(0, lc).After(s.LastCheck) {
			s.LastCheck = time.Unix(0, lc)
		}
	}
	slices.SortFunc(out, func(a, b BackendStatus) int { return strings.Compare(a.URL, b.URL) })
	return out
}

// Changed returns a channel closed at the next health change (a server going
// down or coming back, actively or passively). Call it again after it fires
// for a fresh channel.
func (p *Pool) Changed() <-chan struct{} { return *p.changed.Load() }

// notify wakes Changed waiters. Lock-free: a passive-health transition calls
// it from the request path.
func (p *Pool) notify() {
	ch := make(chan struct{})
	close(*p.changed.Swap(&ch))
}

// Failed charges a failed attempt on b (a transport error or timeout of
// the server, never the client's own failure) to passive health under
// policy pp (nil: the error is only recorded for Status). It reports
// whether this call took the backend out, after waking Changed waiters.
// Lock-free: the request path calls it.
func (p *Pool) Failed(b *Backend, pp *Passive, err error) bool {
	if !b.recordFailure(pp, time.Now(), err) {
		return false
	}
	p.notify()
	return true
}

// origin returns the backend key of a server URL: scheme://host:port.
func origin(u *url.URL) *url.URL {
	return &url.URL{Scheme: u.Scheme, Host: u.Host}
}

// AcquireBackend returns the backend for u's origin, creating it on first
// use, and counts a reference from service (a qualified service name).
func (p *Pool) AcquireBackend(u *url.URL, service string) *Backend {
	o := origin(u)
	k := o.String()
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.backends[k]
	if b == nil {
		b = &Backend{URL: o, key: k, services: map[string]int{}}
		p.backends[k] = b
	}
	b.refs++
	b.services[service]++
	return b
}

// ReleaseBackend drops one reference from service; the backend (and its
// least-time record) is forgotten when none is left.
func (p *Pool) ReleaseBackend(b *Backend, service string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b.refs--
	if b.services[service]--; b.services[service] <= 0 {
		delete(b.services, service)
	}
	if b.refs <= 0 {
		delete(p.backends, b.key)
		delete(p.latencies, b.key)
	}
}

// Latency returns the TTFB record of backend b (held by the caller's
// reference to b), creating it on first use.
func (p *Pool) Latency(b *Backend) *Latency {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.latencies[b.key]
	if s == nil {
		s = &Latency{}
		p.latencies[b.key] = s
	}
	return s
}

// AcquireChecker returns the running checker for (server origin o, spec,
// transport key trKey), starting it on first use with rt as the check's
// transport. Its health state carries over configuration swaps as long as
// one generation holds it.
func (p *Pool) AcquireChecker(o *url.URL, spec *HealthSpec, trKey string, rt http.RoundTripper) *Checker {
	sk, _ := json.Marshal(struct {
		U        string
		Mode     string
		M, H     string
		Hd       map[string]string
		S        int
		I, UI, T time.Duration
		F        bool
		Tr       string
	}{spec.url.String(), spec.mode, spec.method, spec.hostname, spec.headers, spec.status, spec.interval, spec.unhealthyInterval, spec.timeout, spec.followRedirects, trKey})
	key := o.String() + " " + string(sk)
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.checkers[key]; c != nil {
		c.refs++
		return c
	}
	ctx, cancel := context.WithCancel(p.work.Context())
	c := &Checker{
		key:    key,
		origin: o.String(),
		spec:   spec,
		client: healthClient(rt, spec.followRedirects),
		log:    p.log,
		notify: p.notify,
		refs:   1,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	c.up.Store(true)
	p.checkers[key] = c
	if !p.work.Go(func() { c.run(ctx) }) { // the Pool is closed
		cancel()
		close(c.done)
	}
	return c
}

// ReleaseChecker drops a reference; the last one stops the checker and
// waits for it.
func (p *Pool) ReleaseChecker(c *Checker) {
	p.mu.Lock()
	c.refs--
	last := c.refs <= 0
	if last {
		delete(p.checkers, c.key)
	}
	p.mu.Unlock()
	if last {
		c.cancel()
		<-c.done
	}
}
