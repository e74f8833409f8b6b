package dataplane

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/upstream"
)

// PoolOptions configures a Pool.
type PoolOptions struct {
	// ServersTransport is the static default transport to servers, used by
	// services that name no serversTransport (or "default@internal"). Nil
	// means Gantry's defaults (dial 30s, response headers 60s, idle 90s,
	// 200 idle connections per host).
	ServersTransport *static.ServersTransport
	// Hostname is sent as X-Forwarded-Server; empty means os.Hostname().
	Hostname string
}

// Pool holds the long-lived backend state that survives configuration
// generations: backends (in-flight counts, passive health) keyed by server
// origin, active health checkers keyed by (origin, check configuration,
// transport), and upstream Transports keyed by their configuration. Each is
// ref-counted by the generations using it: a new generation acquires before
// the old one releases, so state carries over a swap.
//
// All methods are safe for concurrent use. The Pool owns the checker
// goroutines; Close stops them and waits.
type Pool struct {
	log      *slog.Logger
	hostname string
	defST    *config.ServersTransport
	certs    *defaultCert

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	closed     bool
	backends   map[string]*backend
	checkers   map[string]*checker
	transports map[string]*sharedTransport
	latencies  map[string]*latencyStats // by backend key, for leasttime; dropped with the backend

	changed atomic.Pointer[chan struct{}] // closed and replaced at each health change
}

// sharedTransport is the upstream Client of a serversTransport (every
// proxied request) and the standard Transport its health checks use.
type sharedTransport struct {
	t      *http.Transport // health checks only
	client *upstream.Client
	refs   int
}

func (s *sharedTransport) closeIdle() {
	s.client.Close()
	s.t.CloseIdleConnections()
}

// NewPool returns an empty Pool. log must not be nil.
func NewPool(log *slog.Logger, opts PoolOptions) *Pool {
	ctx, cancel := context.WithCancel(context.Background())
	h := opts.Hostname
	if h == "" {
		h, _ = os.Hostname()
	}
	p := &Pool{
		log:        log,
		hostname:   h,
		defST:      staticTransport(opts.ServersTransport),
		certs:      &defaultCert{},
		ctx:        ctx,
		cancel:     cancel,
		backends:   map[string]*backend{},
		checkers:   map[string]*checker{},
		transports: map[string]*sharedTransport{},
		latencies:  map[string]*latencyStats{},
	}
	ch := make(chan struct{})
	p.changed.Store(&ch)
	return p
}

// Close stops every health checker, waits for them, and closes idle
// upstream connections. Generations must not be built after Close.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.transports {
		st.closeIdle()
	}
}

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
	slices.SortFunc(out, func(a, b BackendStatus) int { return compareStrings(a.URL, b.URL) })
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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

// origin returns the backend key of a server URL: scheme://host:port.
func origin(u *url.URL) *url.URL {
	return &url.URL{Scheme: u.Scheme, Host: u.Host}
}

// acquireBackend returns the backend for u's origin, creating it on first
// use, and counts a reference from service.
func (p *Pool) acquireBackend(u *url.URL, service string) *backend {
	o := origin(u)
	k := o.String()
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.backends[k]
	if b == nil {
		b = &backend{URL: o, key: k, services: map[string]int{}}
		p.backends[k] = b
	}
	b.refs++
	b.services[service]++
	return b
}

// releaseBackend drops one reference from service; the backend is forgotten
// when none is left.
func (p *Pool) releaseBackend(b *backend, service string) {
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

// latencyOf returns the TTFB record of backend b (held by the caller's
// reference to b), creating it on first use.
func (p *Pool) latencyOf(b *backend) *latencyStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.latencies[b.key]
	if s == nil {
		s = &latencyStats{}
		p.latencies[b.key] = s
	}
	return s
}

// acquireChecker returns the running checker for (server origin, spec,
// transport), starting it on first use. Its health state carries over
// configuration swaps as long as one generation holds it.
func (p *Pool) acquireChecker(o *url.URL, spec *healthSpec, trKey string, rt http.RoundTripper) *checker {
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
	ctx, cancel := context.WithCancel(p.ctx)
	c := &checker{
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
	if p.closed {
		cancel()
		close(c.done)
		return c
	}
	p.wg.Go(func() { c.run(ctx) })
	return c
}

// releaseChecker drops a reference; the last one stops the checker.
func (p *Pool) releaseChecker(c *checker) {
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

// acquireTransport returns the shared transport for st (h2c for h2c://
// servers), building it on first use: the upstream Client for proxying and
// the standard Transport (for health checks).
func (p *Pool) acquireTransport(st *config.ServersTransport, h2c bool) (*upstream.Client, *http.Transport, string, error) {
	if st == nil {
		st = p.defST
	}
	key := transportKey(st, h2c)
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.transports[key]; s != nil {
		s.refs++
		return s.client, s.t, key, nil
	}
	rt, t, err := newTransport(st, h2c)
	if err != nil {
		return nil, nil, "", err
	}
	p.transports[key] = &sharedTransport{t: t, client: rt, refs: 1}
	return rt, t, key, nil
}

// releaseTransport drops a reference; the last one closes idle connections.
func (p *Pool) releaseTransport(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.transports[key]
	if s == nil {
		return
	}
	if s.refs--; s.refs <= 0 {
		delete(p.transports, key)
		s.closeIdle()
	}
}
