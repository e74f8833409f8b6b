package generation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/dataplane/balance"
	"github.com/gantry-proxy/gantry/dataplane/proxy"
)

// The services of a generation: each built once, on first use, by the
// router or middleware that names it (Service), then shared.

// Service implements middleware.Resolver: it builds (once) the handler of
// the named service: an internal one from Options.Internal, or a
// loadBalancer, weighted, mirroring or failover service. Errors wrap
// *router.ObjectError naming the service.
func (g *Generation) Service(ctx context.Context, name string) (http.Handler, error) {
	if h, ok := g.opts.Internal[name]; ok && h != nil {
		return h, nil
	}
	return g.services.get(&g.mu, name, func() (http.Handler, error) {
		var cfg *config.Service
		if g.m.Config.HTTP != nil {
			cfg = g.m.Config.HTTP.Services[name]
		}
		var h http.Handler
		var err error
		switch {
		case name == "":
			err = errors.New("no service named")
		case strings.HasSuffix(name, "@internal"):
			err = errors.New("internal service is not enabled")
		case cfg == nil:
			err = errors.New("does not exist")
		default:
			h, err = g.buildService(ctx, name, cfg)
		}
		if err != nil {
			err = objectError("service", name, err)
		}
		return h, err
	})
}

// buildService builds the handler of service kind s and wraps it in the
// service's own middlewares (Traefik v3.7 services middlewares), built once
// here, so every router and parent service using it shares one chain. The
// wrapped handler keeps reporting the service's availability to parents.
func (g *Generation) buildService(ctx context.Context, name string, s *config.Service) (http.Handler, error) {
	h, err := g.buildKind(ctx, name, s)
	if err != nil || len(s.Middlewares) == 0 {
		return h, err
	}
	wrapped, err := g.chain(ctx, s.Middlewares, h)
	if err != nil {
		return nil, fmt.Errorf("middlewares: %w", err)
	}
	if a, ok := h.(balance.Availabler); ok {
		return availWrap{Handler: wrapped, a: a}, nil
	}
	return wrapped, nil
}

func (g *Generation) buildKind(ctx context.Context, name string, s *config.Service) (http.Handler, error) {
	switch {
	case s.LoadBalancer != nil:
		return g.buildLB(name, s.LoadBalancer)
	case s.HighestRandomWeight != nil:
		var children []http.Handler
		var names []string
		var weights []float64
		for _, c := range s.HighestRandomWeight.Services {
			w := c.EffectiveWeight()
			if w <= 0 {
				continue
			}
			ch, err := g.Service(ctx, c.Name)
			if err != nil {
				return nil, fmt.Errorf("highestRandomWeight: %w", err)
			}
			children, names, weights = append(children, ch), append(names, c.Name), append(weights, float64(w))
		}
		return balance.NewHighestRandomWeight(children, names, weights), nil
	case s.Weighted != nil:
		var children []http.Handler
		var weights []int
		for _, c := range s.Weighted.Services {
			var ch http.Handler
			if c.Status != nil {
				ch = balance.StatusHandler(*c.Status)
			} else {
				var err error
				if ch, err = g.Service(ctx, c.Name); err != nil {
					return nil, fmt.Errorf("weighted: %w", err)
				}
			}
			children = append(children, ch)
			w := c.EffectiveWeight()
			weights = append(weights, w)
		}
		var sticky *balance.ChildSticky
		if st := s.Weighted.Sticky; st != nil && st.Cookie != nil {
			sticky = balance.NewChildSticky(name, balance.CookieTemplate(st.Cookie), s.Weighted.Services)
		}
		return balance.NewWeighted(children, weights, sticky), nil
	case s.Mirroring != nil:
		mc := s.Mirroring
		main, err := g.Service(ctx, mc.Service)
		if err != nil {
			return nil, fmt.Errorf("mirroring: %w", err)
		}
		maxBody := int64(-1)
		if mc.MaxBodySize != nil {
			maxBody = *mc.MaxBodySize
		}
		var mirrors []balance.Mirror
		for _, m := range mc.Mirrors {
			h, err := g.Service(ctx, m.Name)
			if err != nil {
				return nil, fmt.Errorf("mirroring: %w", err)
			}
			mirrors = append(mirrors, balance.Mirror{Handler: h, Percent: m.Percent})
		}
		return balance.NewMirroring(main, mirrors, mc.MirrorBody == nil || *mc.MirrorBody, maxBody, g.pool.servers), nil
	case s.Failover != nil:
		fo := s.Failover
		main, err := g.Service(ctx, fo.Service)
		if err != nil {
			return nil, fmt.Errorf("failover: %w", err)
		}
		if (fo.Errors == nil || len(fo.Errors.Status) == 0) && !g.tracksHealth(fo.Service) {
			return nil, fmt.Errorf("failover: main service %s has no healthCheck and failover.errors.status is not set, so the fallback could never be used (Traefik: cannot register %s as updater for %s)", fo.Service, fo.Service, name)
		}
		fb, err := g.Service(ctx, fo.Fallback)
		if err != nil {
			return nil, fmt.Errorf("failover: %w", err)
		}
		if fo.HealthCheck != nil && !g.tracksHealth(fo.Fallback) {
			return nil, fmt.Errorf("failover: healthCheck is set but fallback service %s has no healthCheck whose status it could report (Traefik: cannot register %s as updater for %s)", fo.Fallback, fo.Fallback, name)
		}
		return balance.NewFailover(main, fb, fo)
	}
	return nil, errors.New("no kind set; want one of loadBalancer, highestRandomWeight, weighted, mirroring, failover")
}

// availWrap keeps a wrapped service's availability visible.
type availWrap struct {
	http.Handler
	a balance.Availabler
}

// Available implements balance.Availabler.
func (w availWrap) Available() bool { return w.a.Available() }

// OnRelease implements middleware.Releaser: f runs at Close.
func (g *Generation) OnRelease(f func()) { g.onRelease(f) }

// onRelease registers f to run at Close.
func (g *Generation) onRelease(f func()) {
	g.mu.Lock()
	g.release = append(g.release, f)
	g.mu.Unlock()
}

// buildLB builds a loadBalancer service (proxy.NewLoadBalancer): one
// target per server over its serversTransport's client, backends and
// checkers acquired from the Pool, and the picker of its strategy.
func (g *Generation) buildLB(name string, lb *config.ServersLoadBalancer) (http.Handler, error) {
	var st *config.ServersTransport
	if n := lb.ServersTransport; n != "" && n != "default@internal" {
		if g.m.Config.HTTP != nil {
			st = g.m.Config.HTTP.ServersTransports[n]
		}
		if st == nil {
			return nil, fmt.Errorf("loadBalancer.serversTransport %q does not exist", n)
		}
	}
	passive := balance.NewPassive(lb.PassiveHealthCheck)
	switch lb.Strategy {
	case "", "wrr", "p2c", "hrw", "leasttime":
	default:
		return nil, fmt.Errorf("loadBalancer.strategy %q is not supported (want wrr, p2c, hrw or leasttime)", lb.Strategy)
	}
	o := proxy.LoadBalancer{Name: name, Servers: len(lb.Servers), Strategy: lb.Strategy, Pool: g.pool.servers, Log: g.log}
	for i, srv := range lb.Servers {
		u, err := url.Parse(srv.URL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "h2c") {
			return nil, fmt.Errorf("loadBalancer.servers[%d].url %q: want http://, https:// or h2c://host:port", i, srv.URL)
		}
		if st != nil && st.PeerCertURI != "" && i == 0 {
			g.log.Warn("serversTransport peerCertURI is not supported; ignored", "service", name, "serversTransport", lb.ServersTransport)
		}
		if u.Path != "" && u.Path != "/" && !srv.PreservePath {
			g.log.Warn("server URL path is ignored; set preservePath or use addPrefix/replacePath (case 034)", "service", name, "backend", srv.URL)
		}
		rt, tr, trKey, err := g.pool.transports.Acquire(st, u.Scheme == "h2c")
		if err != nil {
			return nil, fmt.Errorf("loadBalancer.serversTransport %q: %w", lb.ServersTransport, err)
		}
		g.onRelease(func() { g.pool.transports.Release(trKey) })
		b := g.pool.servers.AcquireBackend(u, name)
		g.onRelease(func() { g.pool.servers.ReleaseBackend(b, name) })
		t := proxy.NewTarget(u, b, rt, lb.PassHost(), srv.PreservePath)
		t.Weight, t.Passive, t.Fenced = srv.EffectiveWeight(), passive, srv.Fenced
		if lb.HealthCheck != nil {
			spec, err := balance.NewHealthSpec(b.URL, lb.HealthCheck)
			if err != nil {
				return nil, err
			}
			c := g.pool.servers.AcquireChecker(b.URL, spec, trKey, tr)
			g.onRelease(func() { g.pool.servers.ReleaseChecker(c) })
			t.Check = c
		}
		if t.Weight > 0 {
			o.Targets = append(o.Targets, t)
			o.URLs = append(o.URLs, srv.URL)
		}
	}
	if lb.Sticky != nil && lb.Sticky.Cookie != nil {
		c := balance.CookieTemplate(lb.Sticky.Cookie)
		o.Sticky = &c
	}
	return proxy.NewLoadBalancer(o), nil
}
