package dataplane

import (
	"log/slog"
	"net/http"
	"sync"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/balance"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/tcpproxy"
	"github.com/gantry-proxy/gantry/dataplane/upstream"
)

// PoolOptions configures a Pool.
type PoolOptions struct {
	// ServersTransport is the static default transport to servers, used by
	// services that name no serversTransport (or "default@internal"). Nil
	// means Gantry's defaults (dial 30s, response headers 60s, idle 90s,
	// 200 idle connections per host).
	ServersTransport *static.ServersTransport
}

// Pool holds the long-lived state that survives configuration
// generations: the servers' state (package balance: backends, health
// checkers, least-time records, and the goroutines of checks and mirrored
// requests), the upstream transports keyed by their configuration, and the
// default certificate. Each is ref-counted by the generations using it: a
// new generation acquires before the old one releases, so state carries
// over a swap.
//
// All methods are safe for concurrent use. Close stops the goroutines,
// waits for them, and closes idle upstream connections.
type Pool struct {
	servers *balance.Pool
	defST   *config.ServersTransport
	kept    *certs.Cache

	mu         sync.Mutex
	transports map[string]*sharedTransport
	// tcpHealth is the TCP servers' health across generations (tcpbuild.go).
	tcpHealth tcpproxy.HealthStates
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
	return &Pool{
		servers:    balance.NewPool(log),
		defST:      staticTransport(opts.ServersTransport),
		kept:       &certs.Cache{},
		transports: map[string]*sharedTransport{},
	}
}

// Close stops every health checker and mirrored request, waits for them,
// and closes idle upstream connections. Generations must not be built
// after Close.
func (p *Pool) Close() {
	p.servers.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.transports {
		st.closeIdle()
	}
}

// Status returns every backend in use, sorted by URL.
func (p *Pool) Status() []balance.BackendStatus { return p.servers.Status() }

// Changed returns a channel closed at the next health change (a server going
// down or coming back, actively or passively). Call it again after it fires
// for a fresh channel.
func (p *Pool) Changed() <-chan struct{} { return p.servers.Changed() }

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
