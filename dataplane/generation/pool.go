package generation

import (
	"log/slog"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/balance"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/proxy"
	"github.com/gantry-proxy/gantry/dataplane/tcpproxy"
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
// generations: the servers' state (a balance.Pool: backends, health
// checkers, least-time records, and the goroutines of checks and mirrored
// requests), the upstream transports keyed by their configuration
// (proxy.Transports), the default certificate with the last good
// certificate files (certs.Cache), and the TCP servers' health. Each is
// ref-counted by the generations using it: a new generation acquires
// before the old one releases, so state carries over a swap.
//
// All methods are safe for concurrent use. Close stops the goroutines,
// waits for them, and closes idle upstream connections.
type Pool struct {
	servers    *balance.Pool
	transports *proxy.Transports
	kept       *certs.Cache
	// tcpHealth is the TCP servers' health across generations (tcpbuild.go).
	tcpHealth tcpproxy.HealthStates
	// tcpInFlight is the inFlightConn counts across generations (tcpbuild.go).
	tcpInFlight tcpproxy.InFlightCounts
}

// NewPool returns an empty Pool. log must not be nil.
func NewPool(log *slog.Logger, opts PoolOptions) *Pool {
	return &Pool{
		servers:    balance.NewPool(log),
		transports: proxy.NewTransports(opts.ServersTransport),
		kept:       &certs.Cache{},
	}
}

// Close stops every health checker and mirrored request, waits for them,
// and closes idle upstream connections. Generations must not be built
// after Close.
func (p *Pool) Close() {
	p.servers.Close()
	p.transports.Close()
}

// Status returns every backend in use, sorted by URL.
func (p *Pool) Status() []balance.BackendStatus { return p.servers.Status() }

// Changed returns a channel closed at the next health change (a server going
// down or coming back, actively or passively). Call it again after it fires
// for a fresh channel.
func (p *Pool) Changed() <-chan struct{} { return p.servers.Changed() }
