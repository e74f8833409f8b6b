package generation

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/tcpproxy"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// tcpState is the TCP/UDP part of a Generation: built services and
// middlewares by name, and the health checkers, stopped by Close.
type tcpState struct {
	once     sync.Once
	mu       sync.Mutex
	services memo[tcpmux.Handler]
	udp      memo[*udpPicker]
	checks   *tcpproxy.Group
}

func (g *Generation) tcp() *tcpState {
	g.tcpS.once.Do(func() {
		g.tcpS.services = memo[tcpmux.Handler]{kind: "tcp service", cycle: "reference cycle: the weighted service uses itself"}
		g.tcpS.udp = memo[*udpPicker]{kind: "udp service", cycle: "reference cycle: the weighted service uses itself"}
		g.tcpS.checks = tcpproxy.NewGroup(context.Background())
		g.mu.Lock()
		g.release = append(g.release, g.tcpS.checks.Close)
		g.mu.Unlock()
	})
	return &g.tcpS
}

// BuildTCP implements router.Builder: the router's middlewares (the
// first outermost) around its service.
func (g *Generation) BuildTCP(ctx context.Context, name string, r *config.TCPRouter) (tcpmux.Handler, error) {
	h, err := g.tcpService(ctx, r.Service)
	if err != nil {
		return nil, fmt.Errorf("tcp router %s: %w", name, err)
	}
	for i := len(r.Middlewares) - 1; i >= 0; i-- {
		mn := r.Middlewares[i]
		var m *config.TCPMiddleware
		if g.m.Config.TCP != nil {
			m = g.m.Config.TCP.Middlewares[mn]
		}
		if m == nil {
			return nil, fmt.Errorf("tcp router %s: %w", name, &router.ObjectError{Kind: "tcp middleware", Name: mn, Err: errors.New("does not exist")})
		}
		switch {
		case m.InFlightConn != nil:
			// The counts carry over generations for the same router and
			// middleware: open connections are facts, whatever the cap.
			counts, release := g.pool.tcpInFlight.Acquire(name + "\x00" + mn)
			g.onRelease(release)
			h = &tcpproxy.InFlight{Max: m.InFlightConn.Amount, Next: h, Counts: counts}
		case m.IPAllowList != nil || m.IPWhiteList != nil:
			l := m.IPAllowList
			if l == nil {
				l = m.IPWhiteList
			}
			a := &tcpproxy.AllowList{Next: h}
			for _, s := range l.SourceRange {
				p, err := config.ParseIPRange(s)
				if err != nil {
					return nil, fmt.Errorf("tcp router %s: %w", name, &router.ObjectError{Kind: "tcp middleware", Name: mn, Err: err})
				}
				a.Ranges = append(a.Ranges, p)
			}
			h = a
		}
	}
	if r.TLS != nil && !r.TLS.Passthrough {
		opts := r.TLS.Options
		if opts == "" {
			opts = "default"
		}
		if opts != "default" && (g.m.Config.TLS == nil || g.m.Config.TLS.Options[opts] == nil) {
			return nil, fmt.Errorf("tcp router %s: tls.options %q does not exist", name, opts)
		}
		return &terminating{next: h, g: g, options: opts}, nil
	}
	return h, nil
}

// terminating is the handler of a TCP router that terminates TLS: the
// entrypoint runs the handshake with TLSConfig, then hands the decrypted
// stream to next.
type terminating struct {
	next    tcpmux.Handler
	g       *Generation
	options string

	once sync.Once
	conf *tls.Config
}

// ServeTCP serves the decrypted connection.
func (t *terminating) ServeTCP(c *tcpmux.Conn) { t.next.ServeTCP(c) }

// TLSConfig is the router's tls.options (versions, suites, curves, client
// authentication) with the generation's certificates. ALPN is offered only
// when the options set alpnProtocols: with Traefik's default (h2,
// http/1.1) a client offering only its own protocol (mqtt) would fail the
// handshake with no_application_protocol.
func (t *terminating) TLSConfig() *tls.Config {
	t.once.Do(func() {
		t.g.mu.Lock()
		get, pol := t.g.certGet, t.g.tlsPolicies[t.options]
		t.g.mu.Unlock()
		if pol == nil && (t.options == "" || t.options == "default") {
			pol = certs.DefaultPolicy(nil)
		}
		if pol == nil || pol.Err() != nil {
			// Options that cannot be built (or do not exist) fail the
			// handshake, as Traefik's brokenTLSRouter does, rather than
			// terminate with weaker defaults.
			err := fmt.Errorf("tls.options %q does not exist", t.options)
			if pol != nil {
				err = pol.Err()
			}
			t.conf = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return nil, err }}
			return
		}
		c := pol.Config().Clone()
		c.GetCertificate = get
		c.NextProtos = nil
		if o := t.g.m.Config.TLS; o != nil && o.Options[t.options] != nil && len(o.Options[t.options].ALPNProtocols) > 0 {
			c.NextProtos = o.Options[t.options].ALPNProtocols
		}
		t.conf = c
	})
	return t.conf
}

// tcpService builds (once per generation) the named TCP service.
func (g *Generation) tcpService(ctx context.Context, name string) (tcpmux.Handler, error) {
	st := g.tcp()
	return st.services.get(&st.mu, name, func() (tcpmux.Handler, error) {
		h, err := g.newTCPService(ctx, name)
		return h, asObjectError("tcp service", name, err)
	})
}

// asObjectError is err as the error of object kind name: unchanged when it
// is nil or already a *router.ObjectError (a member's, which names itself).
func asObjectError(kind, name string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*router.ObjectError](err); ok {
		return err
	}
	return &router.ObjectError{Kind: kind, Name: name, Err: err}
}

func (g *Generation) newTCPService(ctx context.Context, name string) (tcpmux.Handler, error) {
	var s *config.TCPService
	if g.m.Config.TCP != nil {
		s = g.m.Config.TCP.Services[name]
	}
	switch {
	case s == nil:
		return nil, errors.New("does not exist")
	case s.Weighted != nil:
		var children []tcpproxy.WeightedChild
		for _, c := range s.Weighted.Services {
			h, err := g.tcpService(ctx, c.Name)
			if err != nil {
				return nil, err
			}
			w := c.EffectiveWeight()
			children = append(children, tcpproxy.WeightedChild{Handler: h, Weight: w})
		}
		return tcpproxy.NewWeighted(children), nil
	case s.LoadBalancer == nil:
		return nil, errors.New("no kind set")
	}
	lb := s.LoadBalancer
	t, err := g.tcpTransport(lb)
	if err != nil {
		return nil, err
	}
	servers := make([]*tcpproxy.Server, 0, len(lb.Servers))
	for _, sv := range lb.Servers {
		servers = append(servers, tcpproxy.NewServer(sv.Address, sv.TLS, sv.EffectiveWeight()))
	}
	if hc := lb.HealthCheck; hc != nil {
		c := &tcpproxy.Checker{Send: hc.Send, Expect: hc.Expect, Interval: hc.Interval.D(), Timeout: hc.Timeout.D()}
		if hc.Port > 0 {
			c.Port = strconv.Itoa(hc.Port)
		}
		if c.Interval <= 0 {
			c.Interval = 30 * time.Second
		}
		if c.Timeout <= 0 {
			c.Timeout = 5 * time.Second
		}
		c.UnhealthyInterval = c.Interval
		if hc.UnhealthyInterval != nil && hc.UnhealthyInterval.D() > 0 {
			c.UnhealthyInterval = hc.UnhealthyInterval.D()
		}
		log := g.log.With("service", name)
		for _, sv := range servers {
			// Health carried across swaps: same service, server and check.
			key := strings.Join([]string{name, sv.Address, c.Port, c.Send, c.Expect}, "\x00")
			st, release := g.pool.tcpHealth.Acquire(key)
			sv.ShareHealth(st)
			g.mu.Lock()
			g.release = append(g.release, release)
			g.mu.Unlock()
			g.tcp().checks.Go(func(ctx context.Context) { c.Run(ctx, sv, log) })
		}
	}
	return tcpproxy.NewLoadBalancer(ctx, name, servers, t, g.log.With("service", name)), nil
}

// tcpTransport resolves a load balancer's serversTransport. The service's
// own (deprecated) proxyProtocol and terminationDelay apply only when it
// names no serversTransport; beside one they are ignored, as in Traefik
// v3.7 (the transport's settings, or their absence, decide).
func (g *Generation) tcpTransport(lb *config.TCPServersLoadBalancer) (*tcpproxy.Transport, error) {
	t := tcpproxy.DefaultTransport()
	if n := lb.ServersTransport; n != "" {
		var st *config.TCPServersTransport
		if g.m.Config.TCP != nil {
			st = g.m.Config.TCP.ServersTransports[n]
		}
		if st == nil {
			return nil, fmt.Errorf("serversTransport %q does not exist", n)
		}
		if st.DialTimeout != 0 {
			t.DialTimeout = st.DialTimeout.D()
		}
		if st.DialKeepAlive != 0 {
			t.DialKeepAlive = st.DialKeepAlive.D()
		}
		if st.TerminationDelay != 0 {
			t.TerminationDelay = st.TerminationDelay.D()
		}
		if pp := st.ProxyProtocol; pp != nil {
			t.ProxyProtocol = max(pp.Version, 1)
			if pp.Version == 0 {
				t.ProxyProtocol = 2
			}
		}
		if c := st.TLS; c != nil {
			tc, err := certs.ClientConfig(&c.TLSClientCommon)
			if err != nil {
				return nil, fmt.Errorf("serversTransport %s: tls.%w", n, err)
			}
			t.TLS = tc
		}
	}
	if lb.ServersTransport != "" {
		// The deprecated load-balancer fields are ignored beside a
		// serversTransport (Traefik v3.7 pkg/tcp/dialer.go; warned by
		// router.Compile).
		return t, nil
	}
	if pp := lb.ProxyProtocol; pp != nil {
		t.ProxyProtocol = pp.Version
		if pp.Version == 0 {
			t.ProxyProtocol = 2
		}
	}
	if lb.TerminationDelay != nil {
		t.TerminationDelay = time.Duration(*lb.TerminationDelay) * time.Millisecond
	}
	return t, nil
}

// BuildUDP implements router.Builder: a picker over the service's
// servers (weighted services flattened by weight).
func (g *Generation) BuildUDP(_ context.Context, name string, r *config.UDPRouter) (router.UDPHandler, error) {
	p, err := g.udpService(r.Service, 0)
	if err != nil {
		return nil, fmt.Errorf("udp router %s: %w", name, err)
	}
	return p, nil
}

// udpPicker is a UDP service: weighted round robin over addresses.
type udpPicker struct{ w *tcpproxy.AddrWRR }

// Pick implements router.UDPHandler.
func (p *udpPicker) Pick() (string, error) {
	a, ok := p.w.Pick()
	if !ok {
		return "", tcpproxy.ErrNoServer
	}
	return a, nil
}

func (g *Generation) udpService(name string, depth int) (*udpPicker, error) {
	st := g.tcp()
	return st.udp.get(&st.mu, name, func() (*udpPicker, error) {
		addrs, err := g.udpAddrs(name, depth)
		if err != nil {
			return nil, asObjectError("udp service", name, err)
		}
		return &udpPicker{w: tcpproxy.NewAddrWRR(addrs)}, nil
	})
}

// udpAddrs lists the weighted addresses of a UDP service.
func (g *Generation) udpAddrs(name string, depth int) ([]tcpproxy.WeightedAddr, error) {
	if depth > 10 {
		return nil, errors.New("weighted services nested more than 10 deep (a reference cycle?)")
	}
	var s *config.UDPService
	if g.m.Config.UDP != nil {
		s = g.m.Config.UDP.Services[name]
	}
	switch {
	case s == nil:
		return nil, errors.New("does not exist")
	case s.LoadBalancer != nil:
		var out []tcpproxy.WeightedAddr
		for _, sv := range s.LoadBalancer.Servers {
			out = append(out, tcpproxy.WeightedAddr{Addr: sv.Address, Weight: sv.EffectiveWeight()})
		}
		return out, nil
	case s.Weighted != nil:
		var out []tcpproxy.WeightedAddr
		for _, c := range s.Weighted.Services {
			sub, err := g.udpAddrs(c.Name, depth+1)
			if err != nil {
				return nil, &router.ObjectError{Kind: "udp service", Name: c.Name, Err: err}
			}
			w := c.EffectiveWeight()
			for _, a := range sub {
				out = append(out, tcpproxy.WeightedAddr{Addr: a.Addr, Weight: a.Weight * w})
			}
		}
		return out, nil
	}
	return nil, errors.New("no kind set")
}
