package dataplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/balance"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/middleware"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/dataplane/proxy"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// GenerationOptions configures a Generation.
type GenerationOptions struct {
	// Log receives build errors and warnings; nil discards.
	Log *slog.Logger
	// Observer receives one event per finished request; nil means none.
	Observer Observer
	// Tracing traces each routed request (tracing section); nil means none.
	Tracing *observe.Tracing
	// Internal maps services Gantry provides itself ("api@internal",
	// "dashboard@internal", "prometheus@internal", "ping@internal",
	// "noop@internal") to their handlers.
	Internal map[string]http.Handler
	// EntryPointMiddlewares lists, per entrypoint, the middlewares of
	// entryPoints.<ep>.http.middlewares; they run before the router's
	// own, on requests arriving on that entrypoint only. A name without
	// "@" is qualified with each router's provider (qualify).
	EntryPointMiddlewares map[string][]string
	// NotFound holds entryPoints.<ep>.http.notFound per entrypoint: the
	// page for requests no router matches (BuildNotFound).
	NotFound map[string]*static.NotFoundPage
	// Challenges answers ACME TLS-ALPN-01 handshakes; nil means none.
	Challenges certs.Challenges
	// Stapler staples OCSP responses to served certificates; nil: none.
	Stapler *certs.Stapler
}

// Generation builds the handlers of one merged configuration. It
// implements router.HandlerBuilder, router.TLSBuilder and
// middleware.Resolver. Services and middlewares are built once and cached
// by name; backends, health checkers and transports are acquired from the
// Pool and released by Close.
//
// Build, BuildTLS and the Resolver methods are meant for the single
// goroutine running router.Compile (they are nevertheless mutex-guarded);
// the handlers they return are immutable and safe for concurrent use.
type Generation struct {
	pool *Pool
	m    *providers.Merged
	opts GenerationOptions
	log  *slog.Logger

	mu          sync.Mutex
	closed      bool
	services    map[string]built[http.Handler]
	middlewares map[string]built[middleware.Middleware]
	building    map[string]bool // "service x" / "middleware y" being built: cycle detection
	release     []func()
	tcpS        tcpState // TCP and UDP services (tcpbuild.go)
	// certGet and tlsPolicies are set by BuildTLS, for TCP routers that
	// terminate TLS (tcpbuild.go).
	certGet     func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	tlsPolicies map[string]*certs.Policy
	// store is the certificate store BuildTLS made; written once before
	// the table is published (Active.Swap), then only read, without a
	// lock, by NegotiatedTLSOptions on the request path.
	store *certs.Store
	// epErrs are the entrypoint middlewares that failed, by qualified
	// name (noteEntryPointError).
	epErrs map[string]*router.ObjectUse
}

type built[T any] struct {
	v   T
	err error
}

var (
	_ router.HandlerBuilder = (*Generation)(nil)
	_ router.TLSBuilder     = (*Generation)(nil)
	_ router.TLSNegotiator  = (*Generation)(nil)
	_ router.ParentBuilder  = (*Generation)(nil)
	_ middleware.Resolver   = (*Generation)(nil)
)

// NewGeneration returns a Generation over m (qualified names) using pool.
func NewGeneration(pool *Pool, m *providers.Merged, opts GenerationOptions) *Generation {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if m == nil || m.Config == nil {
		m = &providers.Merged{Config: config.New()}
	}
	return &Generation{
		pool:        pool,
		m:           m,
		opts:        opts,
		log:         log,
		services:    map[string]built[http.Handler]{},
		middlewares: map[string]built[middleware.Middleware]{},
		building:    map[string]bool{},
	}
}

// Close releases the generation's backends, checkers and transports. Call it
// after the table built from it was replaced; requests still running on its
// handlers finish normally (their backends stay valid). Close is idempotent.
func (g *Generation) Close() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	rel := g.release
	g.release = nil
	g.mu.Unlock()
	for _, f := range rel {
		f()
	}
}

// Build implements router.HandlerBuilder: the complete chain of router
// name, outermost first: recover → observer (when set) → entrypoint
// middlewares (per entrypoint of arrival) → router middlewares → service.
// A missing or broken service or middleware returns an error wrapping a
// *router.ObjectError naming it.
//
// A child router (with parentRefs, multi-layer routing) gets only its
// middlewares and service: entrypoint middlewares, observability and
// panic recovery belong to its root.
func (g *Generation) Build(ctx context.Context, name string, r *config.Router) (http.Handler, error) {
	svc, err := g.Service(ctx, r.Service)
	if err != nil {
		return nil, fmt.Errorf("router %s: %w", name, err)
	}
	return g.build(ctx, name, r, svc)
}

// BuildParent implements router.ParentBuilder: the chain of a router with
// child routers, next (the children's dispatch) in place of a service.
func (g *Generation) BuildParent(ctx context.Context, name string, r *config.Router, next http.Handler) (http.Handler, error) {
	return g.build(ctx, name, r, next)
}

func (g *Generation) build(ctx context.Context, name string, r *config.Router, svc http.Handler) (http.Handler, error) {
	inner, err := g.chain(ctx, r.Middlewares, svc)
	if err != nil {
		return nil, fmt.Errorf("router %s: %w", name, err)
	}
	if len(r.ParentRefs) > 0 {
		return inner, nil
	}
	h := inner
	if len(g.opts.EntryPointMiddlewares) > 0 {
		d := &epDispatch{byEP: map[string]http.Handler{}, def: inner}
		for ep, mws := range g.opts.EntryPointMiddlewares {
			if len(mws) == 0 || (len(r.EntryPoints) > 0 && !slices.Contains(r.EntryPoints, ep)) {
				continue
			}
			eh, err := g.chain(ctx, qualify(mws, providers.ProviderOf(name)), inner)
			if err != nil {
				// Fail closed on that entrypoint only, and report the
				// middleware once (ObjectErrors), not every router.
				g.noteEntryPointError(ep, name, err)
				eh = entryPointUnavailable
			}
			d.byEP[ep] = eh
		}
		if len(d.byEP) > 0 {
			h = d
		}
	}
	if oh := g.observe(name, r, h); oh != nil {
		h = oh
	}
	return &recoverHandler{next: h, log: g.log, router: name}, nil
}

// observe wraps a router's handler for the observers and tracing, per the
// router's observability options (each on unless set false, as in
// Traefik); nil when nothing observes it.
func (g *Generation) observe(name string, r *config.Router, h http.Handler) *observeHandler {
	on := func(b *bool) bool { return b == nil || *b }
	o := r.Observability
	if o == nil {
		o = &config.RouterObservability{}
	}
	oh := &observeHandler{next: h, router: name, service: r.Service, rule: r.Rule,
		noAccessLog: !on(o.AccessLogs), noMetrics: !on(o.Metrics)}
	if g.opts.Observer != nil && (on(o.AccessLogs) || on(o.Metrics)) {
		oh.obs = g.opts.Observer
	}
	if g.opts.Tracing != nil && on(o.Tracing) {
		oh.tracing = g.opts.Tracing
	}
	if oh.obs == nil && oh.tracing == nil {
		return nil
	}
	return oh
}

// chain wraps h in the named middlewares, the first outermost.
func (g *Generation) chain(ctx context.Context, names []string, h http.Handler) (http.Handler, error) {
	for i := len(names) - 1; i >= 0; i-- {
		m, err := g.Middleware(ctx, names[i])
		if err != nil {
			return nil, err
		}
		h = m(h)
	}
	return h, nil
}

// Middleware implements middleware.Resolver: it builds (once) the named
// middleware through middleware.New. Errors wrap *router.ObjectError: an
// unknown name, a reference cycle, or the middleware's own error.
func (g *Generation) Middleware(ctx context.Context, name string) (middleware.Middleware, error) {
	g.mu.Lock()
	if b, ok := g.middlewares[name]; ok {
		g.mu.Unlock()
		return b.v, b.err
	}
	key := "middleware " + name
	if g.building[key] {
		g.mu.Unlock()
		return nil, &router.ObjectError{Kind: "middleware", Name: name, Err: errors.New("reference cycle: the middleware uses itself through a chain")}
	}
	g.building[key] = true
	g.mu.Unlock()

	var m middleware.Middleware
	var err error
	cfg := g.m.Config.HTTP.Middlewares[name]
	if g.m.Config.HTTP == nil || cfg == nil {
		err = errors.New("does not exist")
	} else {
		m, err = middleware.New(ctx, name, cfg, g)
	}
	if err != nil {
		err = objectError("middleware", name, err)
	}
	g.mu.Lock()
	delete(g.building, key)
	g.middlewares[name] = built[middleware.Middleware]{m, err}
	g.mu.Unlock()
	return m, err
}

// Service implements middleware.Resolver: it builds (once) the handler of
// the named service: an internal one from GenerationOptions.Internal, or a
// loadBalancer, weighted, mirroring or failover service. Errors wrap
// *router.ObjectError naming the service.
func (g *Generation) Service(ctx context.Context, name string) (http.Handler, error) {
	if h, ok := g.opts.Internal[name]; ok && h != nil {
		return h, nil
	}
	g.mu.Lock()
	if b, ok := g.services[name]; ok {
		g.mu.Unlock()
		return b.v, b.err
	}
	key := "service " + name
	if g.building[key] {
		g.mu.Unlock()
		return nil, &router.ObjectError{Kind: "service", Name: name, Err: errors.New("reference cycle: the service uses itself")}
	}
	g.building[key] = true
	g.mu.Unlock()

	var h http.Handler
	var err error
	var cfg *config.Service
	if g.m.Config.HTTP != nil {
		cfg = g.m.Config.HTTP.Services[name]
	}
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
	g.mu.Lock()
	delete(g.building, key)
	g.services[name] = built[http.Handler]{h, err}
	g.mu.Unlock()
	return h, err
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
			w := 1
			if c.Weight != nil {
				w = *c.Weight
			}
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
			w := 1
			if c.Weight != nil {
				w = *c.Weight
			}
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

// objectError wraps err as the error of object kind name, outermost, so
// that a chain or weighted service that fails because of a member is
// reported itself (the member's own ObjectError stays in the chain). The
// object's name is not repeated when err already starts with it.
func objectError(kind, name string, err error) error {
	if oe, ok := errors.AsType[*router.ObjectError](err); ok && oe.Kind == kind && oe.Name == name && error(oe) == err {
		return err
	}
	return &router.ObjectError{Kind: kind, Name: name, Err: trimPrefix(err, kind+" "+name+": ")}
}

// prefixTrimmed is err without a leading prefix in its message, so that
// ObjectError, which names the object itself, does not name it twice.
type prefixTrimmed struct {
	err error
	msg string
}

func (e prefixTrimmed) Error() string { return e.msg }
func (e prefixTrimmed) Unwrap() error { return e.err }

func trimPrefix(err error, prefix string) error {
	if msg, ok := strings.CutPrefix(err.Error(), prefix); ok {
		return prefixTrimmed{err: err, msg: msg}
	}
	return err
}
