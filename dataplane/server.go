package dataplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/h1"
	"github.com/gantry-proxy/gantry/dataplane/handoff"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/router"
)

// Entrypoint defaults. Traefik's readTimeout (60s, whole request) and
// idleTimeout (180s) are kept; Gantry adds a header-read timeout and a
// header limit far below Go's 1 MiB (reliability.md §3.2, §3.3, §8).
const (
	defaultReadHeaderTimeout    = 10 * time.Second
	defaultReadTimeout          = 60 * time.Second
	defaultIdleTimeout          = 180 * time.Second
	defaultGraceTimeout         = 10 * time.Second
	defaultMaxHeaderBytes       = 64 << 10
	defaultMaxConcurrentStreams = 100
	// defaultMaxConnections is entryPoints.<name>.transport.maxConnections
	// when unset: Envoy's edge guidance is 10 000 per listener and 50 000
	// downstream connections overall; a Gantry entrypoint usually is the
	// whole edge, so it gets the overall figure.
	defaultMaxConnections = 50000
)

// Server serves every entrypoint from the live routing table.
//
// Each entrypoint opens one listener per GOMAXPROCS with SO_REUSEPORT on
// Linux (one elsewhere), each with its own accept loop. A connection's first
// byte decides TLS (0x16) or plain HTTP, so one port serves both, like
// Traefik. TLS certificates come from the live table (Table.Certificate), so
// a certificate change needs no restart and drops no connection; ALPN offers
// h2 and http/1.1.
//
// HTTP/1.1 and HTTP/1.0, plain or TLS (ALPN http/1.1 or none), are served by
// package h1 alone; HTTP/2 (ALPN h2, and h2c with prior knowledge on plain
// connections) by the standard library's HTTP/2 server. Both call the same
// entry handler (ServeHTTP) with the same connection facts. An Upgrade: h2c
// request is never honoured.
//
// Each entrypoint holds at most maxConnections connections (accepted, not
// yet closed, upgraded ones included); at the cap its accept loops stop
// accepting, so new connections wait in the kernel's backlog instead of
// being accepted and starved. The header timeout of a connection's first
// request runs from its accept: the wait for the first byte, the TLS
// handshake and the head share it.
type Server struct {
	log      *slog.Logger
	active   *router.Active
	obs      Observer
	hostname string

	// drain ends the graceful drains of removed entrypoints early (Shutdown's
	// context ending); drainCtx is what they run under.
	drainCtx context.Context
	drain    context.CancelFunc

	mu         sync.Mutex
	eps        map[string]*entryPoint        // the entrypoints served (or to serve at Start)
	cfgs       map[string]*static.EntryPoint // their configurations (redirection targets)
	challenges certs.Challenges
	http01     map[string]bool                 // entrypoints some resolver's httpChallenge uses
	tracing    atomic.Pointer[observe.Tracing] // traces unrouted requests; nil: none
	inherit    *handoff.Inherited
	started    bool
	stopped    bool // Shutdown began: no entrypoint is added or removed any more
	// wg joins every goroutine of every entrypoint, removed ones included.
	wg sync.WaitGroup
}

// entryPoint is one entrypoint's settings and running state.
type entryPoint struct {
	name     string
	address  string
	trust    trustList
	hostname string
	active   *router.Active
	obs      Observer
	log      *slog.Logger

	readTimeout, readHeaderTimeout, writeTimeout, idleTimeout time.Duration
	grace, acceptGrace                                        time.Duration
	maxHeaderBytes                                            int
	maxStreams                                                uint32
	keepAliveMaxRequests                                      int64
	keepAliveMaxTime                                          time.Duration
	fallbackTLS                                               *certs.Policy
	proxyIn                                                   *proxyPolicy     // proxyProtocol (tcpentry.go)
	challenges                                                certs.Challenges // ACME; see SetChallenges
	// http01 is set on the entrypoint of a resolver's httpChallenge: it
	// answers every /.well-known/acme-challenge/ request itself (404 for
	// an unknown token) unless acmeBypass (allowACMEByPass) is set.
	http01, acmeBypass bool
	h3                 *h3Endpoint        // http3 (http3.go); nil when off
	inherit            *handoff.Inherited // sockets of the binary upgrade (upgrade.go)

	tracing *atomic.Pointer[observe.Tracing] // the Server's; see SetTracing

	inflight atomic.Int64
	// slots holds one token per open connection (maxConnections); stop
	// ends accept loops waiting for a slot.
	slots    chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	tlsConf  *tls.Config
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

// NewServer validates the entrypoints and returns a Server that is not
// listening yet. Errors name the entrypoint and the bad option (address,
// trustedIPs, redirection target). obs may be nil.
func NewServer(log *slog.Logger, active *router.Active, eps map[string]*static.EntryPoint, obs Observer) (*Server, error) {
	host, _ := os.Hostname()
	s := &Server{log: log, active: active, obs: obs, hostname: host, eps: map[string]*entryPoint{}, cfgs: map[string]*static.EntryPoint{}}
	s.drainCtx, s.drain = context.WithCancel(context.Background())
	var errs []error
	for name, c := range eps {
		ep, err := s.newEntryPoint(name, c, eps)
		if err != nil {
			errs = append(errs, fmt.Errorf("entrypoint %s: %w", name, err))
			continue
		}
		s.eps[name], s.cfgs[name] = ep, c
	}
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// newEntryPoint validates c and returns entrypoint name wired to s (live
// table, observer, logger, ACME challenges, inherited sockets); all holds
// every entrypoint's configuration, for redirection targets.
func (s *Server) newEntryPoint(name string, c *static.EntryPoint, all map[string]*static.EntryPoint) (*entryPoint, error) {
	ep, err := newEntryPoint(name, c, all)
	if err != nil {
		return nil, err
	}
	ep.hostname, ep.active, ep.obs, ep.log = s.hostname, s.active, s.obs, s.log.With("entrypoint", name)
	ep.challenges, ep.inherit, ep.tracing = s.challenges, s.inherit, &s.tracing
	ep.http01 = s.http01[name]
	if c != nil && c.HTTP != nil && c.HTTP.FastPath != nil {
		ep.log.Warn("entryPoints." + name + ".http.fastPath is deprecated and ignored: every HTTP/1.1 connection is served by Gantry's HTTP/1.1 server")
	}
	return ep, nil
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
		maxHeaderBytes:    defaultMaxHeaderBytes,
		maxStreams:        defaultMaxConcurrentStreams,
		conns:             map[*trackedConn]struct{}{},
		fallbackTLS:       certs.DefaultPolicy(helloHandshake),
		acmeBypass:        c.AllowACMEByPass,
		stop:              make(chan struct{}),
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
			return nil, fmt.Errorf("transport.maxConnections %d: want a positive number (0 for the default %d)", t.MaxConnections, defaultMaxConnections)
		}
		maxConns = t.MaxConnections
		ep.keepAliveMaxRequests = int64(max(0, t.KeepAliveMaxRequests))
		ep.keepAliveMaxTime = max(0, t.KeepAliveMaxTime.D())
		if lc := t.LifeCycle; lc != nil {
			if lc.GraceTimeOut > 0 {
				ep.grace = lc.GraceTimeOut.D()
			}
			ep.acceptGrace = max(0, lc.RequestAcceptGraceTimeout.D())
		}
	}
	if maxConns == 0 {
		maxConns = defaultMaxConnections
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

// Start binds every listener of every entrypoint and starts serving. It
// returns an error naming the entrypoint and address when a bind fails; the
// listeners already opened are then closed. ctx bounds the binding only;
// serving stops with Shutdown.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("server already started")
	}
	s.started = true
	names := make([]string, 0, len(s.eps))
	for n := range s.eps {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := s.eps[n].listen(ctx); err != nil {
			for _, m := range names {
				s.eps[m].closeListeners()
				s.eps[m].shutdownH3(ctx)
			}
			return fmt.Errorf("entrypoint %s: listen on %s: %w", n, s.eps[n].address, err)
		}
	}
	for _, n := range names {
		s.eps[n].serve(&s.wg)
		s.log.Info("entrypoint listening", "entrypoint", n, "address", s.eps[n].listeners[0].Addr().String(), "listeners", len(s.eps[n].listeners))
	}
	return nil
}

// Addrs returns the bound addresses of entryPoint (one per listener; they
// share one port), or nil before Start or for an unknown name.
func (s *Server) Addrs(entryPoint string) []net.Addr {
	s.mu.Lock()
	ep := s.eps[entryPoint]
	s.mu.Unlock()
	if ep == nil {
		return nil
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	out := make([]net.Addr, 0, len(ep.listeners))
	for _, l := range ep.listeners {
		out = append(out, l.Addr())
	}
	return out
}

// EntryPoints returns the names of the entrypoints served (those of
// NewServer and AddEntryPoint, less the removed ones), sorted.
func (s *Server) EntryPoints() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.eps))
}

// AddEntryPoint validates cfg as NewServer does and, on a started Server,
// binds its listeners and starts serving it, exactly like an entrypoint of
// the static configuration: the same listeners per core, HTTP/1.1, HTTP/2,
// TLS from the live table, TCP routers, the PROXY protocol, HTTP/3 when
// cfg.HTTP3 is set, connection tracking, and the graceful Shutdown. Before
// Start it only registers the entrypoint (Start binds it). It returns once
// the listeners accept, so routes naming the entrypoint can be swapped in
// after it. ctx bounds the binding only.
//
// Errors name the entrypoint: an invalid cfg (as NewServer), a name already
// served, a Server shut down, or a failed bind (address in use, no
// permission); after an error nothing of the entrypoint is left open. UDP
// addresses ("…/udp") are refused: UDP entrypoints are served by
// udpproxy.Server. cfg.HTTP.Redirections may target any entrypoint served
// when it is added.
func (s *Server) AddEntryPoint(ctx context.Context, name string, cfg *static.EntryPoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return fmt.Errorf("entrypoint %s: server shut down", name)
	}
	if _, ok := s.eps[name]; ok {
		return fmt.Errorf("entrypoint %s: already served", name)
	}
	all := maps.Clone(s.cfgs)
	all[name] = cfg
	ep, err := s.newEntryPoint(name, cfg, all)
	if err != nil {
		return fmt.Errorf("entrypoint %s: %w", name, err)
	}
	if s.started {
		if err := ep.listen(ctx); err != nil {
			ep.closeListeners()
			ep.shutdownH3(ctx)
			return fmt.Errorf("entrypoint %s: listen on %s: %w", name, ep.address, err)
		}
		ep.serve(&s.wg)
		s.log.Info("entrypoint listening", "entrypoint", name, "address", ep.listeners[0].Addr().String(), "listeners", len(ep.listeners))
	}
	s.eps[name], s.cfgs[name] = ep, cfg
	return nil
}

// RemoveEntryPoint stops serving entrypoint name. When it returns, the
// name is free (AddEntryPoint may reuse it, on the same port too) and its
// TCP listeners are closed, so new connections are refused; requests in
// flight, WebSockets and TCP-routed connections included, then get grace to
// finish (grace <= 0: the entrypoint's transport.lifeCycle.graceTimeOut,
// default 10s) before what is left is closed, as at Shutdown but without
// requestAcceptGraceTimeout. Keep-alive connections close after their
// response in progress. The HTTP/3 socket, when there is one, is closed at
// the end of the drain. done is closed when the drain is over; Shutdown
// waits for drains in progress (its context cuts them).
//
// Errors: name is not served, or Shutdown began.
func (s *Server) RemoveEntryPoint(name string, grace time.Duration) (done <-chan struct{}, err error) {
	s.mu.Lock()
	ep := s.eps[name]
	switch {
	case s.stopped:
		err = fmt.Errorf("entrypoint %s: server shut down", name)
	case ep == nil:
		err = fmt.Errorf("entrypoint %s: not served", name)
	}
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	delete(s.eps, name)
	delete(s.cfgs, name)
	started := s.started
	s.mu.Unlock()
	ch := make(chan struct{})
	if !started { // nothing bound yet
		close(ch)
		return ch, nil
	}
	if grace <= 0 {
		grace = ep.grace
	}
	ep.draining.Store(true)
	ep.closeListeners()
	s.log.Info("entrypoint removed; draining", "entrypoint", name, "grace", grace)
	s.wg.Go(func() {
		defer close(ch)
		ep.shutdown(s.drainCtx, 0, grace)
	})
	return ch, nil
}

// listen opens listenerCount() SO_REUSEPORT listeners on the address; with
// port 0 the first one picks the port and the others join it.
//
// SO_REUSEPORT would let a second process of the same user share a busy
// port silently (splitting its traffic); a plain bind first makes a busy
// port fail Start as without SO_REUSEPORT.
func (e *entryPoint) listen(ctx context.Context) error {
	if ok, err := e.adopt(ctx); ok || err != nil { // binary upgrade
		if err != nil {
			return err
		}
		return e.listenH3(ctx)
	}
	lc := listenConfig()
	addr := e.address
	if _, port, _ := net.SplitHostPort(addr); port != "0" {
		probe, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		if err := probe.Close(); err != nil {
			return fmt.Errorf("close probe listener: %w", err)
		}
	}
	for i := range listenerCount() {
		l, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.listeners = append(e.listeners, l)
		e.mu.Unlock()
		if i == 0 {
			host, _, _ := net.SplitHostPort(addr)
			addr = net.JoinHostPort(host, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
		}
	}
	return e.listenH3(ctx)
}

func (e *entryPoint) closeListeners() {
	e.stopOnce.Do(func() { close(e.stop) })
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.listeners {
		_ = l.Close()
	}
}

// serve starts, per listener, its accept loop and its HTTP/2 server. Every
// goroutine joins wg.
func (e *entryPoint) serve(wg *sync.WaitGroup) {
	e.tlsConf = &tls.Config{
		MinVersion:         tls.VersionTLS12,
		NextProtos:         []string{"h2", "http/1.1"},
		GetConfigForClient: e.configForClient,
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.listeners {
		h2 := newChanListener(l.Addr())
		hs := e.h2Server()
		e.servers = append(e.servers, hs)
		e.chans = append(e.chans, h2)
		wg.Go(func() { _ = hs.Serve(h2) })
		e.loops.Add(1)
		h1s := e.h1Server(h2, wg)
		e.h1s = append(e.h1s, h1s)
		wg.Go(func() { e.acceptLoop(l, h2, h1s, wg) })
	}
	e.serveH3(wg)
}

// h2MaxReadFrameSize is the largest frame an HTTP/2 client may send
// (SETTINGS_MAX_FRAME_SIZE, RFC 9113 §6.5.2): the protocol's default
// 16 384, as nginx, rather than Go's 1 MiB, so a client that ignores the
// setting and sends a larger frame gets the FRAME_SIZE_ERROR the RFC asks
// for (h2spec http2/4.2.3) and a frame never needs more than 16 KiB of
// buffer.
const h2MaxReadFrameSize = 16 << 10

// h2Server returns the HTTP/2 server of one listener: it is fed TLS
// connections that negotiated h2 (already handshaken) and plain ones that
// start with the h2c preface, and serves nothing else.
func (e *entryPoint) h2Server() *http.Server {
	var p http.Protocols
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:           e,
		Protocols:         &p,
		ReadTimeout:       e.readTimeout,
		ReadHeaderTimeout: e.readHeaderTimeout,
		WriteTimeout:      e.writeTimeout,
		IdleTimeout:       e.idleTimeout,
		MaxHeaderBytes:    e.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(e.log.Handler(), slog.LevelDebug),
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: int(e.maxStreams), MaxReadFrameSize: h2MaxReadFrameSize},
		ConnContext:       e.connContext,
	}
	if e.obs != nil {
		srv.ConnState = func(c net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				e.obs.Conn(e.name, protoOf(c), 1)
			case http.StateClosed, http.StateHijacked:
				e.obs.Conn(e.name, protoOf(c), -1)
			}
		}
	}
	return srv
}

// connContext gives a connection's requests its connInfo, created at
// accept (so the TLS handshake and every request share it).
func (e *entryPoint) connContext(ctx context.Context, c net.Conn) context.Context {
	if tc := trackedOf(c); tc != nil {
		return withConnInfo(ctx, tc.info)
	}
	return withConnInfo(ctx, &connInfo{entryPoint: e.name, hs: certs.Handshake{EntryPoint: e.name}, trusted: e.trust.trusts(c.RemoteAddr()), start: time.Now()})
}

func protoOf(c net.Conn) string {
	if tc := trackedOf(c); tc != nil && tc.info.tls {
		return "https"
	}
	return "http"
}

// acceptLoop accepts on one listener until it is closed. Each connection
// holds one of the entrypoint's connection slots: with every slot taken,
// the loop parks the connection it just accepted (not read, not served)
// until a slot frees, and accepts nothing more, so further connections wait
// in the kernel's backlog. (At most one parked connection per listener goes
// past the cap.) Temporary errors (EMFILE) back off from 5ms to 1s, as
// net/http does.
func (e *entryPoint) acceptLoop(l net.Listener, h2 *chanListener, h1s *h1.Server, wg *sync.WaitGroup) {
	defer e.loops.Add(-1)
	var delay time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() || isTemporary(err) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				e.log.Warn("accept failed; retrying", "error", err, "delay", delay)
				time.Sleep(delay)
				continue
			}
			e.log.Error("accept failed; listener stopped", "error", err)
			return
		}
		delay = 0
		select {
		case e.slots <- struct{}{}:
		default:
			e.log.Debug("connection cap reached; accepting paused", "maxConnections", cap(e.slots))
			select {
			case e.slots <- struct{}{}:
			case <-e.stop:
				_ = c.Close()
				return
			}
		}
		now := time.Now()
		tc := &trackedConn{Conn: c, ep: e, accepted: now,
			info: &connInfo{entryPoint: e.name, hs: certs.Handshake{EntryPoint: e.name}, trusted: e.trust.trusts(c.RemoteAddr()), start: now}}
		if !e.track(tc) {
			_ = tc.Close()
			continue
		}
		e.sniffers.Add(1)
		wg.Go(func() { e.sniff(tc, h2, h1s) })
	}
}

func isTemporary(err error) bool {
	t, ok := errors.AsType[interface {
		error
		Temporary() bool
	}](err)
	return ok && t.Temporary()
}

// sniff reads the first byte and, when it starts a TLS handshake record
// (0x16), runs the handshake; a connection that negotiated h2 goes to the
// HTTP/2 server, every other one is served by h1. The header timeout runs
// from the accept for all of it. The caller counted c in e.sniffers.
// TCP routers and the PROXY protocol see the connection first (divert,
// tcpentry.go).
func (e *entryPoint) sniff(c *trackedConn, h2 *chanListener, h1s *h1.Server) {
	deadline := c.accepted.Add(e.readHeaderTimeout)
	if e.divert(c) {
		return
	}
	if c.sniffed.Load() {
		// divert read the first bytes and cleared its deadline: the
		// handshake and head still share the one from the accept.
		_ = c.SetReadDeadline(deadline)
	} else if !e.sniffFirst(c, deadline) {
		_ = c.Close()
		return
	}
	if c.first[0] != 0x16 {
		h1s.ServeConn(c, deadline)
		return
	}
	c.info.tls = true
	tc := tls.Server(c, e.tlsConf)
	if err := tc.HandshakeContext(withConnInfo(context.Background(), c.info)); err != nil {
		e.log.Debug("TLS handshake failed", "remote", c.RemoteAddr().String(), "error", err)
		_ = c.Close()
		return
	}
	if tc.ConnectionState().NegotiatedProtocol == "h2" {
		_ = c.SetDeadline(time.Time{})
		h2.push(tc)
		return
	}
	h1s.ServeConn(tc, deadline)
}

// sniffFirst reads the first byte of c into c.first, bounded by deadline
// (kept for what follows), and ends c's count in e.sniffers.
func (e *entryPoint) sniffFirst(c *trackedConn, deadline time.Time) bool {
	defer e.sniffers.Add(-1)
	_ = c.SetReadDeadline(deadline)
	var b [1]byte
	if _, err := c.Conn.Read(b[:]); err != nil {
		return false
	}
	c.sniffed.Store(true)
	c.first = b[:]
	return true
}

// h1Server returns the HTTP/1 server of one listener; connections that
// start with the h2c preface go to h2. Goroutines that continue idle
// connections join wg.
func (e *entryPoint) h1Server(h2 *chanListener, wg *sync.WaitGroup) *h1.Server {
	return &h1.Server{
		Go:                wg.Go,
		Handler:           e,
		H2C:               h2.push,
		ReadHeaderTimeout: e.readHeaderTimeout,
		IdleTimeout:       e.idleTimeout,
		ReadTimeout:       e.readTimeout,
		WriteTimeout:      e.writeTimeout,
		MaxHeaderBytes:    e.maxHeaderBytes,
		MaxHeaders:        maxHeaderFields,
		ConnContext:       e.connContext,
		Draining:          e.draining.Load,
		Log:               e.log,
		ConnState: func(c net.Conn, st http.ConnState) {
			if tc := trackedOf(c); tc != nil {
				tc.idle.Store(st == http.StateIdle) // shutdown cuts idle waits
				busy := st == http.StateNew || st == http.StateActive
				if tc.busy.Swap(busy) != busy {
					if busy {
						e.h1busy.Add(1)
					} else {
						e.h1busy.Add(-1)
					}
				}
			}
			if e.obs == nil {
				return
			}
			switch st {
			case http.StateNew:
				e.obs.Conn(e.name, protoOf(c), 1)
			case http.StateClosed, http.StateHijacked:
				e.obs.Conn(e.name, protoOf(c), -1)
			}
		},
	}
}

// track adds c to the live set; false once shutdown closed the set.
func (e *entryPoint) track(c *trackedConn) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conns == nil {
		return false
	}
	e.conns[c] = struct{}{}
	return true
}

func (e *entryPoint) forget(c *trackedConn) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.conns, c)
}

// configForClient picks the certificate for a handshake from the live
// table and returns the config of the TLS options the certificate store
// chose for the SNI name (min/max version, suites, client auth, ALPN). A
// table without a certificate source (no TLSBuilder) leaves the handshake
// to the entrypoint's fallback policy, which fails it for lack of a
// certificate.
func (e *entryPoint) configForClient(hello *tls.ClientHelloInfo) (*tls.Config, error) {
	cert, err := e.active.Load().Certificate(hello)
	if err != nil {
		return nil, err
	}
	ci := helloConnInfo(hello)
	if ci == nil {
		return nil, errors.New("tls: handshake outside a Server connection")
	}
	ci.hs.Cert = cert
	p := ci.hs.Policy
	if p == nil {
		p = e.fallbackTLS
	}
	return p.Config(), nil
}
