package generation

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/middleware"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// Options configures a Generation.
type Options struct {
	// Log receives build errors and warnings; nil discards.
	Log *slog.Logger
	// Observer receives one event per finished request; nil means none.
	Observer observe.Observer
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
// implements router.Builder and middleware.Resolver. Services and middlewares are built once and cached
// by name; backends, health checkers and transports are acquired from the
// Pool and released by Close.
//
// Build, BuildTLS and the Resolver methods are meant for the single
// goroutine running router.Compile (they are nevertheless mutex-guarded);
// the handlers they return are immutable and safe for concurrent use.
type Generation struct {
	pool *Pool
	m    *providers.Merged
	opts Options
	log  *slog.Logger

	mu          sync.Mutex
	closed      bool
	services    memo[http.Handler]
	middlewares memo[middleware.Middleware]
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

// memo holds the objects of one kind a generation built, by name: each is
// built once, on first use, and shared. A name asked for again while its
// own build is under way (a service reaching itself through its children,
// a middleware through a chain) is a reference cycle. The zero value with
// kind and cycle set is ready; the caller's mutex guards it.
type memo[T any] struct {
	kind  string // the router.ObjectError kind: "service", "tcp service", …
	cycle string // the error of a reference cycle

	done     map[string]built[T]
	building map[string]bool
}

type built[T any] struct {
	v   T
	err error
}

// get returns the object named name, built by build the first time (with
// mu, which guards m, not held: build may ask for other names). Its value
// and error are kept; a reference cycle returns a *router.ObjectError of
// m's kind naming name, not kept.
func (m *memo[T]) get(mu *sync.Mutex, name string, build func() (T, error)) (T, error) {
	mu.Lock()
	if b, ok := m.done[name]; ok {
		mu.Unlock()
		return b.v, b.err
	}
	if m.building[name] {
		mu.Unlock()
		var zero T
		return zero, &router.ObjectError{Kind: m.kind, Name: name, Err: errors.New(m.cycle)}
	}
	if m.done == nil {
		m.done, m.building = map[string]built[T]{}, map[string]bool{}
	}
	m.building[name] = true
	mu.Unlock()
	v, err := build()
	mu.Lock()
	delete(m.building, name)
	m.done[name] = built[T]{v, err}
	mu.Unlock()
	return v, err
}

var (
	_ router.Builder      = (*Generation)(nil)
	_ middleware.Resolver = (*Generation)(nil)
)

// New returns a Generation over m (qualified names) using pool.
func New(pool *Pool, m *providers.Merged, opts Options) *Generation {
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
		services:    memo[http.Handler]{kind: "service", cycle: "reference cycle: the service uses itself"},
		middlewares: memo[middleware.Middleware]{kind: "middleware", cycle: "reference cycle: the middleware uses itself through a chain"},
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

// Build implements router.Builder: the complete chain of router
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

// BuildParent implements router.Builder: the chain of a router with
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
		if ro, ok := oh.obs.(observe.RouteObserver); ok {
			oh.obs = ro.ForRoute(name, r.Service) // label sets resolved per route, not per request
		}
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
	return g.middlewares.get(&g.mu, name, func() (middleware.Middleware, error) {
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
		return m, err
	})
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
