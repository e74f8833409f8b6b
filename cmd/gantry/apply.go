package main

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dashboard"
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/entrypoints"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/dataplane/udpproxy"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/store"
)

// saver persists an applied configuration (store.DB).
type saver interface {
	SaveApplied(ctx context.Context, m *providers.Merged, at time.Time, counts *store.Counts) error
}

// applier turns merged configurations into live routing tables
// (design.md §2.4 step 3–6). apply is called by one goroutine at a time: at
// boot for the stored configuration, then by the aggregator's Run.
type applier struct {
	log     *slog.Logger
	pool    *dataplane.Pool
	active  *router.Active
	store   saver // nil: nothing is saved
	genOpts dataplane.GenerationOptions
	ropts   router.Options
	// reloaded, when set, is called after each swap (metrics).
	reloaded func(at time.Time)
	// observe, when set, is told each applied configuration (the ACME
	// resolvers derive the certificates routers need from it).
	observe func(m *providers.Merged)
	// certFiles, when set, watches the certificate files of each applied
	// configuration.
	certFiles *certs.CertFiles
	// epTLS is entryPoints.<ep>.http.tls, given to routers without tls.
	epTLS epTLS
	// applied, when set, is told the version of each swapped-in
	// configuration (the Consul registration's meta).
	applied func(version string)
	// dyn, once set (serveDynamic, after the entrypoints listen), opens
	// the dynamic entrypoints a configuration asks for before its routes
	// are swapped in, and retires those it no longer asks for after.
	dyn *entrypoints.Manager

	mu       sync.Mutex            // serializes apply and reapply
	last     *providers.Merged     // the configuration applied last
	gen      *dataplane.Generation // the live generation; owned by apply
	problems map[string]bool       // problems logged at the previous apply
}

// routerOptions derives Compile's options from the static configuration.
func routerOptions(c *static.Configuration) router.Options {
	var o router.Options
	for _, name := range slices.Sorted(maps.Keys(c.EntryPoints)) {
		o.EntryPoints = append(o.EntryPoints, router.EntryPoint{Name: name, AsDefault: c.EntryPoints[name].AsDefault, UDP: isUDP(c.EntryPoints[name])})
	}
	if c.Core != nil {
		o.DefaultRuleSyntax = c.Core.DefaultRuleSyntax
	}
	// Bad redirections are refused at load (validateStatic); here they
	// would only leave the redirect routers out.
	o.Internal, _ = dataplane.RedirectRoutes(c.EntryPoints)
	return o
}

// entryPointMiddlewares returns entryPoints.<ep>.http.middlewares per
// entrypoint, for GenerationOptions, as written: the Generation qualifies
// a name without "@" with each router's provider, as Traefik does.
func entryPointMiddlewares(c *static.Configuration) map[string][]string {
	out := map[string][]string{}
	for name, ep := range c.EntryPoints {
		if ep.HTTP != nil && len(ep.HTTP.Middlewares) > 0 {
			out[name] = slices.Clone(ep.HTTP.Middlewares)
		}
	}
	return out
}

// entryPointNotFound returns entryPoints.<ep>.http.notFound per
// entrypoint, for GenerationOptions.
func entryPointNotFound(c *static.Configuration) map[string]*static.NotFoundPage {
	out := map[string]*static.NotFoundPage{}
	for name, ep := range c.EntryPoints {
		if ep.HTTP != nil && ep.HTTP.NotFound != nil {
			out[name] = ep.HTTP.NotFound
		}
	}
	return out
}

// apply builds a generation for m, compiles its table, saves m when save is
// true, swaps the table in, retires the previous generation, and logs one
// "config applied" line plus the problems that appeared or went away.
// Calls are serialized.
func (a *applier) apply(ctx context.Context, m *providers.Merged, save bool) *router.Table {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = m
	return a.applyLocked(ctx, m, save)
}

// reapply builds a new generation of the configuration applied last, so
// that files it refers to (certificates) are read again; nothing is saved.
func (a *applier) reapply(ctx context.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.last != nil {
		a.applyLocked(ctx, a.last, false)
	}
}

// restatic installs what generations take from the static configuration
// c (the entrypoint list, redirections and rule syntax for Compile,
// entrypoint middlewares, not-found pages and TLS defaults) and the
// internal handlers, then rebuilds the generation of the configuration
// applied last, so routes on a new entrypoint and a rebuilt API serve at
// once (a live static reload, reload.go).
func (a *applier) restatic(ctx context.Context, c *static.Configuration, internal map[string]http.Handler) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ropts = routerOptions(c)
	a.epTLS = entryPointTLS(c)
	a.genOpts.EntryPointMiddlewares = entryPointMiddlewares(c)
	a.genOpts.NotFound = entryPointNotFound(c)
	a.genOpts.Internal = internal
	if a.dyn != nil {
		// Validated at load: the allow-list, the template and the static
		// names apply to this apply's requests.
		if err := a.dyn.SetStatic(c); err != nil {
			a.log.Error("dynamicEntryPoints not reloaded", "error", err)
		}
	}
	if a.last != nil {
		a.applyLocked(ctx, a.last, false)
	}
}

// observeAlso adds o to the observers of the generations built from now
// on (restatic or the next apply builds one).
func (a *applier) observeAlso(o dataplane.Observer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.genOpts.Observer = observe.Tee(a.genOpts.Observer, o)
}

// serveDynamic makes every later apply follow the dynamic entrypoints
// providers ask for, through dyn, and applies the configuration applied
// last again so that its requests are served now.
func (a *applier) serveDynamic(ctx context.Context, dyn *entrypoints.Manager) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dyn = dyn
	if a.last != nil && a.last.Config != nil && len(a.last.Config.EntryPoints) > 0 {
		a.applyLocked(ctx, a.last, false)
	}
}

func (a *applier) applyLocked(ctx context.Context, saved *providers.Merged, save bool) *router.Table {
	start := time.Now()
	served, ropts := saved, a.ropts
	if a.dyn != nil {
		// Listeners first: the routes naming them are swapped in next.
		eps, problems := a.dyn.Open(ctx, saved)
		if len(eps) > 0 {
			ropts.EntryPoints = append(slices.Clone(ropts.EntryPoints), eps...)
		}
		if len(problems) > 0 {
			cp := *saved
			cp.Problems = append(slices.Clone(saved.Problems), problems...)
			served = &cp
		}
	}
	m := a.epTLS.apply(served, ropts.EntryPoints) // what is served; saved is what providers said
	// The certificate files' contents are taken as the watcher's reference
	// before the generation reads them: a file replaced in between is then
	// a change (one more generation), never the reference itself. Taken
	// after the swap, a certificate rotated as it was applied kept the old
	// one serving until the next change.
	if a.certFiles != nil && m.Config != nil {
		a.certFiles.Watch(certs.CertPaths(m.Config.TLS))
	}
	gen := dataplane.NewGeneration(a.pool, m, a.genOpts)
	t := router.Compile(ctx, m, gen, ropts)
	// Saved before the swap, because the swap is what tells the dashboard:
	// each WebSocket loop wakes on the old table's Replaced channel, sends
	// "config", and the page re-reads /api/revisions, which must list the
	// new version (saved after the swap, a loaded disk left the page's
	// "Recent changes" without it until the next change).
	if save && a.store != nil {
		// With the figures the dashboard's overview shows for this table,
		// so its Revisions tab counts as the overview does.
		if err := a.store.SaveApplied(ctx, saved, time.Now(), dashboard.Counts(t)); err != nil {
			a.log.Error("save applied configuration", "version", m.Version, "error", err)
		}
	}
	a.active.Swap(t)
	if a.dyn != nil {
		a.dyn.Retire() // after the swap: no route names them any more
	}
	if a.gen != nil {
		a.gen.Close()
	}
	a.gen = gen
	// Counted at the swap, when requests see the new table: a scrape that
	// finds a route served finds its reload counted.
	if a.reloaded != nil {
		a.reloaded(time.Now())
	}
	if a.observe != nil {
		a.observe(m)
	}
	if a.applied != nil {
		// The cluster compares what instances route, not where it came
		// from: m.Version also hashes problems and origins (file paths,
		// container names), which differ between hosts serving the same
		// configuration. The content hash is the one instances agree on.
		v, err := providers.Hash(m.Config)
		if err != nil {
			v = m.Version
		}
		a.applied(v)
	}
	rep := t.Report()
	a.logProblems(ctx, m, rep)
	a.log.Info("config applied",
		"version", m.Version,
		"routers", rep.RouterCount(),
		"disabled", rep.Count(router.StatusDisabled),
		"took", time.Since(start).Round(time.Microsecond))
	return t
}

// logProblems logs each problem that was not there at the previous apply
// (configuration problems from providers at Warn, or Info for pending
// inputs; routing problems at Warn) and each one that went away at Info,
// so a provider re-publishing the same broken input does not repeat it.
func (a *applier) logProblems(ctx context.Context, m *providers.Merged, rep *router.Report) {
	now := map[string]bool{}
	for _, p := range m.Problems {
		key := p.String()
		now[key] = true
		if a.problems[key] {
			continue
		}
		level := slog.LevelWarn
		if p.Severity == providers.SeverityPending { // e.g. a container still starting (case 014)
			level = slog.LevelInfo
		}
		a.log.Log(ctx, level, "configuration problem", "provider", p.Provider, "source", p.Source, "severity", string(p.Severity), "problem", p.Message)
	}
	for _, p := range rep.Problems() {
		now[p] = true
		if !a.problems[p] {
			a.log.Warn("routing problem", "problem", p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(a.problems)) {
		if !now[p] {
			a.log.Info("problem resolved", "problem", p)
		}
	}
	a.problems = now
}

// close retires the live generation (at shutdown).
func (a *applier) close() {
	if a.gen != nil {
		a.gen.Close()
		a.gen = nil
	}
}

// isUDP reports whether ep listens on UDP (address "…/udp").
func isUDP(ep *static.EntryPoint) bool {
	_, proto, _ := strings.Cut(ep.Address, "/")
	return strings.EqualFold(proto, "udp")
}

// splitEntryPoints separates the TCP entrypoints (served by
// dataplane.Server) from the UDP ones (udpproxy.Server).
func splitEntryPoints(c *static.Configuration) (tcp map[string]*static.EntryPoint, udp []udpproxy.EntryPoint) {
	tcp = map[string]*static.EntryPoint{}
	for _, name := range slices.Sorted(maps.Keys(c.EntryPoints)) {
		ep := c.EntryPoints[name]
		if !isUDP(ep) {
			tcp[name] = ep
			continue
		}
		addr, _, _ := strings.Cut(ep.Address, "/")
		u := udpproxy.EntryPoint{Name: name, Address: addr, Grace: 10 * time.Second}
		if ep.UDP != nil {
			u.Timeout = ep.UDP.Timeout.D()
		}
		if lc := ep.Transport; lc != nil && lc.LifeCycle != nil && lc.LifeCycle.GraceTimeOut > 0 {
			u.Grace = lc.LifeCycle.GraceTimeOut.D()
		}
		udp = append(udp, u)
	}
	return tcp, udp
}
