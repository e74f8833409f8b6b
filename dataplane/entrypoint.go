package dataplane

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/conninfo"
	"github.com/gantry-proxy/gantry/dataplane/h1"
	"github.com/gantry-proxy/gantry/dataplane/handoff"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/router"
)

// Entrypoint defaults. Traefik's readTimeout (60s, whole request) and
// idleTimeout (180s) are kept; Gantry adds a header-read timeout and a
// header limit far below Go's 1 MiB (reliability.md §3.2, §3.3, §8).
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = 60 * time.Second
	defaultIdleTimeout       = 180 * time.Second
	defaultGraceTimeout      = 10 * time.Second
	// defaultUpgradedGrace is transport.lifeCycle.upgradedGraceTimeOut
	// when unset: nginx keeps an old worker's connections until they end
	// (worker_shutdown_timeout bounds it, unset by default), HAProxy an
	// old process's (hard-stop-after); Gantry bounds it to minutes, so
	// WebSockets outlive a reload or an upgrade but an old process or
	// entrypoint never lingers for hours.
	defaultUpgradedGrace        = 5 * time.Minute
	defaultMaxHeaderBytes       = 64 << 10
	defaultMaxConcurrentStreams = 100
)

// entryPoint is one entrypoint's settings and running state.
type entryPoint struct {
	name     string
	address  string
	trust    trustList
	hostname string
	active   *router.Active
	obs      observe.Observer
	log      *slog.Logger

	readTimeout, readHeaderTimeout, writeTimeout, idleTimeout time.Duration
	grace, acceptGrace                                        time.Duration
	// upgradedGrace bounds the drain of upgraded connections when a
	// successor takes over (drainFor); never below grace.
	upgradedGrace        time.Duration
	maxHeaderBytes       int
	maxStreams           uint32
	keepAliveMaxRequests int64
	keepAliveMaxTime     time.Duration
	fallbackTLS          *certs.Policy
	proxyIn              *proxyPolicy     // proxyProtocol (tcpentry.go)
	challenges           certs.Challenges // ACME; see SetChallenges
	// http01 is set on the entrypoint of a resolver's httpChallenge: it
	// answers every /.well-known/acme-challenge/ request itself (404 for
	// an unknown token) unless acmeBypass (allowACMEByPass) is set.
	http01, acmeBypass bool
	h3                 *h3Endpoint        // http3 (http3.go); nil when off
	inherit            *handoff.Inherited // sockets of the binary upgrade (upgrade.go)

	tracing *atomic.Pointer[observe.Tracing] // the Server's; see SetTracing

	inflight atomic.Int64
	tcpLive  tcpLive // TCP-routed connections, for watchTCP (tcpwatch.go)
	// cutTCP is closed (once: cutOnce) when the shutdown closes the
	// connections left after its grace period: a TCP byte copy waiting
	// without bound (terminationDelay negative) ends then
	// (tcpmux.Conn.Cut).
	cutTCP  chan struct{}
	cutOnce sync.Once
	// slots holds one token per open connection (maxConnections); stop
	// ends accept loops waiting for a slot.
	slots    chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	// atCap counts accept loops waiting at the cap (takeSlotAtCap);
	// parked wakes one when a connection parks idle; capWarned: the cap
	// was logged since a slot was last free.
	atCap     atomic.Int32
	parked    chan struct{}
	capWarned atomic.Bool
	tlsConf   *tls.Config
	// sanitize cleans request paths before routing
	// (entryPoints.<name>.http.sanitizePath, default true).
	sanitize bool
	// denyEncoded lists the escapes answered 400 (upper-case hex, "2F"),
	// entryPoints.<name>.http.encodedCharacters.
	denyEncoded []string
	draining    atomic.Bool  // h1 connections close after the response in progress
	h1busy      atomic.Int64 // h1 connections reading or serving a request (shutdown waits for them)
	sniffers    atomic.Int64 // connections whose first byte is awaited or being handed over
	loops       atomic.Int64 // running accept loops
	upgraded    atomic.Int64 // open upgraded connections (trackedConn.markUpgraded)
	// handedOver: a successor serves on this entrypoint's very sockets
	// (ReplaceEntryPoint); its drain serves the connections it accepted.
	handedOver atomic.Bool

	mu        sync.Mutex
	listeners []net.Listener
	servers   []*http.Server
	h1s       []*h1.Server
	chans     []*chanListener
	conns     map[*trackedConn]struct{}
}

// parseAddress validates "[host]:port[/tcp]" and returns "host:port".
func parseAddress(a string) (string, error) {
	addr, proto, _ := strings.Cut(a, "/")
	if proto != "" && !strings.EqualFold(proto, "tcp") {
		return "", fmt.Errorf("address %q: protocol %s is not supported (Gantry serves HTTP over tcp)", a, proto)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("address %q: want [host]:port: %w", a, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return "", fmt.Errorf("address %q: bad port: %w", a, err)
	}
	return net.JoinHostPort(host, port), nil
}

func newEntryPoint(name string, c *static.EntryPoint, all map[string]*static.EntryPoint) (*entryPoint, error) {
	if c == nil {
		c = &static.EntryPoint{}
	}
	if c.Address == "" {
		return nil, errors.New("address is empty")
	}
	addr, err := parseAddress(c.Address)
	if err != nil {
		return nil, err
	}
	maxConns := 0
	ep := &entryPoint{
		name:              name,
		address:           addr,
		readTimeout:       defaultReadTimeout,
		readHeaderTimeout: defaultReadHeaderTimeout,
		idleTimeout:       defaultIdleTimeout,
		grace:             defaultGraceTimeout,
		upgradedGrace:     defaultUpgradedGrace,
		maxHeaderBytes:    defaultMaxHeaderBytes,
		maxStreams:        defaultMaxConcurrentStreams,
		conns:             map[*trackedConn]struct{}{},
		tcpLive:           tcpLive{kick: make(chan struct{}, 1)},
		cutTCP:            make(chan struct{}),
		fallbackTLS:       certs.DefaultPolicy(conninfo.Handshake),
		acmeBypass:        c.AllowACMEByPass,
		stop:              make(chan struct{}),
		parked:            make(chan struct{}, 1),
		sanitize:          c.HTTP == nil || c.HTTP.SanitizePath == nil || *c.HTTP.SanitizePath,
	}
	if c.HTTP != nil {
		ep.denyEncoded = c.HTTP.EncodedCharacters.Denied()
	}
	if c.MaxHeaderBytes > 0 {
		ep.maxHeaderBytes = c.MaxHeaderBytes
	}
	if c.HTTP2 != nil && c.HTTP2.MaxConcurrentStreams > 0 {
		ep.maxStreams = uint32(c.HTTP2.MaxConcurrentStreams)
	}
	if t := c.Transport; t != nil {
		if rt := t.RespondingTimeouts; rt != nil {
			// A set value, even 0 (no limit, case 035 E2), replaces the default.
			if rt.ReadTimeout != nil {
				ep.readTimeout = max(0, rt.ReadTimeout.D())
			}
			if rt.WriteTimeout != nil {
				ep.writeTimeout = max(0, rt.WriteTimeout.D())
			}
			if rt.IdleTimeout != nil {
				ep.idleTimeout = max(0, rt.IdleTimeout.D())
			}
			if rt.ReadHeaderTimeout != nil && rt.ReadHeaderTimeout.D() > 0 {
				ep.readHeaderTimeout = rt.ReadHeaderTimeout.D()
			}
		}
		if t.MaxConnections < 0 {
			return nil, fmt.Errorf("transport.maxConnections %d: want a positive number (0 for the default: up to %d, less under a low open-file limit)", t.MaxConnections, defaultMaxConnections)
		}
		maxConns = t.MaxConnections
		ep.keepAliveMaxRequests = int64(max(0, t.KeepAliveMaxRequests))
		ep.keepAliveMaxTime = max(0, t.KeepAliveMaxTime.D())
		if lc := t.LifeCycle; lc != nil {
			if lc.GraceTimeOut > 0 {
				ep.grace = lc.GraceTimeOut.D()
			}
			ep.acceptGrace = max(0, lc.RequestAcceptGraceTimeout.D())
			if lc.UpgradedGraceTimeOut > 0 {
				ep.upgradedGrace = lc.UpgradedGraceTimeOut.D()
			}
		}
	}
	ep.upgradedGrace = max(ep.upgradedGrace, ep.grace)
	if maxConns == 0 {
		maxConns = connCapFor(nofileLimit(), len(all), listenerCount())
	}
	ep.slots = make(chan struct{}, maxConns)
	if ep.readTimeout > 0 && ep.readHeaderTimeout > ep.readTimeout {
		ep.readHeaderTimeout = ep.readTimeout
	}
	if fh := c.ForwardedHeaders; fh != nil {
		if ep.trust, err = parseTrustList(fh.Insecure, fh.TrustedIPs); err != nil {
			return nil, fmt.Errorf("forwardedHeaders.%w", err)
		}
	}
	if ep.proxyIn, err = newProxyPolicy(c.ProxyProtocol); err != nil {
		return nil, fmt.Errorf("proxyProtocol.%w", err)
	}
	if ep.h3, err = newH3(c.HTTP3); err != nil {
		return nil, err
	}
	if c.HTTP != nil && c.HTTP.Redirections != nil && c.HTTP.Redirections.EntryPoint != nil {
		if _, err = newRedirect(c.HTTP.Redirections.EntryPoint, all); err != nil { // routed by RedirectRoutes
			return nil, fmt.Errorf("http.redirections.entryPoint: %w", err)
		}
	}
	return ep, nil
}
