package dataplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/handoff"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/router"
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
// yet closed, upgraded ones included; by default a share of the open-file
// limit, connCapFor); at the cap a new connection takes the slot of the
// oldest idle keep-alive connection, which is closed, and when none is idle
// the accept loops stop accepting, so new connections wait in the kernel's
// backlog instead of being accepted and starved. The header timeout of a connection's first
// request runs from its accept: the wait for the first byte, the TLS
// handshake and the head share it.
type Server struct {
	log      *slog.Logger
	active   *router.Active
	obs      observe.Observer
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
	// stopping is closed when Shutdown begins: drains of replaced
	// entrypoints then cut their upgraded connections at grace.
	stopping chan struct{}
	// wg joins every goroutine of every entrypoint, removed ones included.
	wg sync.WaitGroup
}

// NewServer validates the entrypoints and returns a Server that is not
// listening yet. Errors name the entrypoint and the bad option (address,
// trustedIPs, redirection target). obs may be nil.
func NewServer(log *slog.Logger, active *router.Active, eps map[string]*static.EntryPoint, obs observe.Observer) (*Server, error) {
	host, _ := os.Hostname()
	s := &Server{log: log, active: active, obs: obs, hostname: host, eps: map[string]*entryPoint{}, cfgs: map[string]*static.EntryPoint{},
		stopping: make(chan struct{})}
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
	if c != nil && c.Transport != nil && c.Transport.MaxConnections > 0 {
		if nofile := nofileLimit(); nofile > 0 {
			if fits := connCapFor(nofile, len(all), listenerCount()); c.Transport.MaxConnections > fits {
				ep.log.Warn("entryPoints."+name+".transport.maxConnections is over this entrypoint's share of the open-file limit: at the limit no entrypoint accepts (EMFILE), the API's and /ping's included; raise the limit (ulimit -n, LimitNOFILE) or lower the cap",
					"maxConnections", c.Transport.MaxConnections, "share", fits, "openFileLimit", nofile)
			}
		}
	}
	if c != nil && c.HTTP != nil && c.HTTP.FastPath != nil {
		ep.log.Warn("entryPoints." + name + ".http.fastPath is deprecated and ignored: every HTTP/1.1 connection is served by Gantry's HTTP/1.1 server")
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
		ep.shutdown(s.drainCtx, 0, grace, 0, nil)
	})
	return ch, nil
}
