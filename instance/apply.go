package instance

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/entrypoints"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/store"
)

// A Listener is told each configuration the instance swapped in (Apply,
// Reapply, ReloadStatic), right after the swap: m is what is served
// (entrypoint TLS given to routers, dynamic entrypoint problems added), at
// when the swap finished. It is called with the instance's apply lock
// held, one configuration at a time: it must not call back into Apply.
type Listener interface {
	Applied(ctx context.Context, m *providers.Merged, at time.Time)
}

// ListenerFunc is a function as a Listener.
type ListenerFunc func(ctx context.Context, m *providers.Merged, at time.Time)

// Applied calls f.
func (f ListenerFunc) Applied(ctx context.Context, m *providers.Merged, at time.Time) { f(ctx, m, at) }

// Apply swaps in m, as providers merged it, and saves it as the last good
// configuration (design.md §2.4 steps 3–6). The steps, in order:
//
//  1. The dynamic entrypoints m asks for are opened (after Start), so the
//     routes naming them find a listener; those that cannot be are
//     problems of the configuration served.
//  2. Entrypoint TLS is given to the routers without their own
//     (EntryPointTLS); the certificate files of m are watched, their
//     contents taken as the reference before the generation reads them
//     (a file replaced in between is a change, never the reference); a
//     new generation.Generation is built over the pool and router.Compile
//     makes the table.
//  3. m is saved in the store, with Options.Counts' figures for the
//     table, before the swap: the swap wakes the dashboard (the old
//     table's Replaced channel), which then re-reads /api/revisions.
//  4. The table is swapped in: requests from now on use it.
//  5. The dynamic entrypoints no route names any more are retired.
//  6. The previous generation is closed: its health checkers, backends
//     and transports are released (those the new one shares carry over).
//  7. The listeners are told, in order (the reload metrics first: a scrape
//     that finds a new route served finds its reload counted).
//  8. One "config applied" line is logged, with the problems that
//     appeared or went away since the previous apply.
//
// Calls are serialized; it returns the table swapped in.
func (i *Instance) Apply(ctx context.Context, m *providers.Merged) *router.Table {
	return i.apply(ctx, m, true)
}

// apply is Apply, saving m only when save is true.
func (i *Instance) apply(ctx context.Context, m *providers.Merged, save bool) *router.Table {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.last = m
	return i.applyLocked(ctx, m, save)
}

// Reapply builds a new generation of the configuration applied last, so
// that the files it refers to (certificates) are read again; nothing is
// saved.
func (i *Instance) Reapply(ctx context.Context) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.last != nil {
		i.applyLocked(ctx, i.last, false)
	}
}

// ReloadStatic is a live static reload's swap (after OpenEntryPoints):
//
//  1. What generations take from the static configuration c is installed:
//     the entrypoint list, redirections and rule syntax for Compile,
//     entrypoint middlewares, not-found pages and TLS defaults, and
//     internal, the "…@internal" handlers (a rebuilt API).
//  2. The dynamic entrypoints take c's allow-list and template (what it
//     no longer allows is retired after the swap).
//  3. The configuration applied last is swapped in again (Apply's steps,
//     not saved), so routes on a new entrypoint and the rebuilt API serve
//     at once.
//  4. The entrypoints the reload removes (OpenEntryPoints) stop accepting
//     and drain within their graceTimeOut, in the background.
func (i *Instance) ReloadStatic(ctx context.Context, c *static.Configuration, internal map[string]http.Handler) {
	i.mu.Lock()
	i.ropts = RouterOptions(c)
	i.epTLS = EntryPointTLSOf(c)
	i.genOpts.EntryPointMiddlewares = EntryPointMiddlewares(c)
	i.genOpts.NotFound = EntryPointNotFound(c)
	i.genOpts.Internal = internal
	if dyn := i.dyn.Load(); dyn != nil {
		// Validated at load: the allow-list, the template and the static
		// names apply to this apply's requests.
		if err := dyn.SetStatic(c); err != nil {
			i.log.Error("dynamicEntryPoints not reloaded", "error", err)
		}
	}
	if i.last != nil {
		i.applyLocked(ctx, i.last, false)
	}
	i.mu.Unlock()
	i.removeEntryPoints()
}

// ObserveAlso adds o to the observers of the generations built from now
// on (the next ReloadStatic or Apply builds one).
func (i *Instance) ObserveAlso(o observe.Observer) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.genOpts.Observer = observe.Tee(i.genOpts.Observer, o)
}

// serveDynamic makes every later apply follow the dynamic entrypoints
// providers ask for, through dyn, and applies the configuration applied
// last again so that its requests are served now.
func (i *Instance) serveDynamic(ctx context.Context, dyn *entrypoints.Manager) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.dyn.Store(dyn)
	if i.last != nil && i.last.Config != nil && len(i.last.Config.EntryPoints) > 0 {
		i.applyLocked(ctx, i.last, false)
	}
}

// applyLocked runs Apply's steps; i.mu is held.
func (i *Instance) applyLocked(ctx context.Context, saved *providers.Merged, save bool) *router.Table {
	start := time.Now()
	served, ropts := saved, i.ropts
	dyn := i.dyn.Load()
	if dyn != nil {
		// Listeners first: the routes naming them are swapped in next.
		eps, problems := dyn.Open(ctx, saved)
		if len(eps) > 0 {
			ropts.EntryPoints = append(slices.Clone(ropts.EntryPoints), eps...)
		}
		if len(problems) > 0 {
			cp := *saved
			cp.Problems = append(slices.Clone(saved.Problems), problems...)
			served = &cp
		}
	}
	m := i.epTLS.Apply(served, ropts.EntryPoints) // what is served; saved is what providers said
	// The certificate files' contents are taken as the watcher's reference
	// before the generation reads them: a file replaced in between is then
	// a change (one more generation), never the reference itself. Taken
	// after the swap, a certificate rotated as it was applied kept the old
	// one serving until the next change.
	if m.Config != nil {
		i.certFiles.Watch(certs.CertPaths(m.Config.TLS))
	}
	gen := generation.New(i.pool, m, i.genOpts)
	t := router.Compile(ctx, m, gen, ropts)
	// Saved before the swap, because the swap is what tells the dashboard:
	// each WebSocket loop wakes on the old table's Replaced channel, sends
	// "config", and the page re-reads /api/revisions, which must list the
	// new version (saved after the swap, a loaded disk left the page's
	// "Recent changes" without it until the next change).
	if save && i.store != nil {
		// With the figures the dashboard's overview shows for this table,
		// so its Revisions tab counts as the overview does.
		var counts *store.Counts
		if i.counts != nil {
			counts = i.counts(t)
		}
		if err := i.store.SaveApplied(ctx, saved, time.Now(), counts); err != nil {
			i.log.Error("save applied configuration", "version", m.Version, "error", err)
		}
	}
	i.active.Swap(t)
	if dyn != nil {
		dyn.Retire() // after the swap: no route names them any more
	}
	if i.gen != nil {
		i.gen.Close()
	}
	i.gen = gen
	// The listeners are told right after the swap, the reload metrics
	// first (cmd's order): counted when requests see the new table, a
	// scrape that finds a route served finds its reload counted.
	at := time.Now()
	for _, l := range i.listeners {
		l.Applied(ctx, m, at)
	}
	rep := t.Report()
	i.logProblems(ctx, m, rep)
	attrs := []any{
		"version", m.Version,
		"routers", rep.RouterCount(),
		"disabled", rep.Count(router.StatusDisabled),
		"took", time.Since(start).Round(time.Microsecond),
	}
	if w := waiting(m); w != "" {
		attrs = append(attrs, "waiting", w)
	}
	i.log.Info("config applied", attrs...)
	return t
}

// waiting names the providers that have not published since Gantry
// started (state starting, or stored: their part of the last good
// configuration is served), comma-separated and sorted, or "" when every
// provider has: a configuration applied while one is still being waited
// for says so in its log line ("waiting=file").
func waiting(m *providers.Merged) string {
	var names []string
	for name, s := range m.Sources {
		if s.State == providers.StateStarting || s.State == providers.StateStored {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// logProblems logs each problem that was not there at the previous apply
// (configuration problems from providers at Warn, or Info for pending
// inputs; routing problems at Warn) and each one that went away at Info,
// so a provider re-publishing the same broken input does not repeat it.
func (i *Instance) logProblems(ctx context.Context, m *providers.Merged, rep *router.Report) {
	now := map[string]bool{}
	for _, p := range m.Problems {
		key := p.String()
		now[key] = true
		if i.problems[key] {
			continue
		}
		level := slog.LevelWarn
		if p.Severity == providers.SeverityPending { // e.g. a container still starting (case 014)
			level = slog.LevelInfo
		}
		i.log.Log(ctx, level, "configuration problem", "provider", p.Provider, "source", p.Source, "severity", string(p.Severity), "problem", p.Message)
	}
	for _, p := range rep.Problems() {
		now[p] = true
		if !i.problems[p] {
			if src := problemSource(m.Origins, p); src != "" {
				i.log.Warn("routing problem", "problem", p, "source", src)
			} else {
				i.log.Warn("routing problem", "problem", p)
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(i.problems)) {
		if !now[p] {
			i.log.Info("problem resolved", "problem", p)
		}
	}
	i.problems = now
}

// problemSource is where the object a routing problem names was defined
// ("dynamic.yml:12:5"), from the providers' origins; for a rule error, the
// rule's own position. p is one of router.Report.Problems' lines,
// "<kind> <name>: <error>". "" when the provider recorded no position.
func problemSource(origins map[string]string, p string) string {
	obj, msg, ok := strings.Cut(p, ": ")
	if !ok {
		return ""
	}
	if ro := origins["rule "+obj]; ro != "" && strings.HasPrefix(msg, "rule") {
		return ro
	}
	return origins[obj]
}
