package instance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/entrypoints"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/handoff"
	"github.com/gantry-proxy/gantry/dataplane/udpproxy"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/store"
)

// Options configure New.
type Options struct {
	// Log receives the instance's lines ("config applied", problems,
	// entrypoints); nil discards them.
	Log *slog.Logger
	// Store keeps the last good configuration: Start serves it before any
	// provider reports and Apply saves each configuration it swaps in. The
	// Instance owns it from New on (Shutdown closes it). Nil: nothing is
	// restored nor saved (tests, benchmarks).
	Store *store.DB
	// Counts, when set, gives the figures saved with each configuration
	// (store.Counts: what the dashboard's overview shows for table t), so
	// that the revisions count as the overview does; nil saves none. cmd
	// sets dashboard.Counts: the instance does not import the dashboard.
	Counts func(t *router.Table) *store.Counts
}

// Instance is one running proxy (see the package documentation for its
// steps). Its methods are safe for concurrent use, except that Start and
// Shutdown are each called once, in that order, and a static reload
// (OpenEntryPoints then ReloadStatic) runs on one goroutine at a time.
type Instance struct {
	log       *slog.Logger
	static    *static.Configuration // at New; a static reload keeps its own
	store     *store.DB
	counts    func(*router.Table) *store.Counts
	pool      *generation.Pool
	active    *router.Active
	agg       *providers.Aggregator
	certFiles *certs.CertFiles
	stapler   *certs.Stapler

	// Set by Start, read-only after it.
	tcp       *dataplane.Server
	udp       *udpproxy.Server
	cancel    context.CancelFunc // ends the components' context
	wg        sync.WaitGroup     // the components
	first     chan struct{}      // closed at the first configuration applied
	firstOnce sync.Once

	shutdown    sync.Once
	shutdownErr error

	// dyn opens the dynamic entrypoints configurations ask for (nil
	// before Start).
	dyn atomic.Pointer[entrypoints.Manager]
	// removing are the entrypoints a static reload removes once its
	// routing table is in (OpenEntryPoints, then ReloadStatic).
	removing []removal

	mu        sync.Mutex // serializes Apply, Reapply and ReloadStatic
	genOpts   generation.Options
	ropts     router.Options
	epTLS     EntryPointTLS
	listeners []Listener
	last      *providers.Merged      // the configuration applied last
	gen       *generation.Generation // the live generation
	problems  map[string]bool        // problems logged at the previous apply
}

// New returns the Instance for the static configuration c: it makes the
// pool of upstream state (serversTransport), an empty routing table and
// the aggregator (providersThrottleDuration), and takes opts.Store.
// Nothing listens and no goroutine runs until Start.
func New(c *static.Configuration, opts Options) *Instance {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var debounce time.Duration
	if c.Providers != nil && c.Providers.ProvidersThrottleDuration != nil {
		debounce = c.Providers.ProvidersThrottleDuration.D()
	}
	i := &Instance{
		log:       log,
		static:    c,
		store:     opts.Store,
		counts:    opts.Counts,
		pool:      generation.NewPool(log.With("component", "pool"), generation.PoolOptions{ServersTransport: c.ServersTransport}),
		active:    router.NewActive(),
		agg:       providers.NewAggregator(log, debounce),
		certFiles: certs.NewCertFiles(log.With("component", "certfiles")),
		stapler:   certs.NewStapler(log.With("component", "ocsp"), nil),
		first:     make(chan struct{}),
		ropts:     RouterOptions(c),
		epTLS:     EntryPointTLSOf(c),
	}
	i.genOpts = generation.Options{Log: log, Stapler: i.stapler,
		EntryPointMiddlewares: EntryPointMiddlewares(c), NotFound: EntryPointNotFound(c)}
	return i
}

// Pool returns the upstream state shared by every generation.
func (i *Instance) Pool() *generation.Pool { return i.pool }

// Active returns the routing table the entrypoints serve.
func (i *Instance) Active() *router.Active { return i.active }

// Providers returns the aggregator: a static reload replaces, adds and
// removes providers through it; the API lists its sources.
func (i *Instance) Providers() *providers.Aggregator { return i.agg }

// DynamicEntryPoints returns the dynamic entrypoints open now, by name
// (nil before Start).
func (i *Instance) DynamicEntryPoints() map[string]*static.EntryPoint {
	dyn := i.dyn.Load()
	if dyn == nil {
		return nil
	}
	return dyn.Serving()
}

// Addrs returns the bound addresses of the TCP entrypoint name, or nil
// (before Start, unknown or UDP).
func (i *Instance) Addrs(name string) []net.Addr {
	if i.tcp == nil {
		return nil
	}
	return i.tcp.Addrs(name)
}

// Component is a goroutine Start runs under the instance's context and
// Shutdown joins: Run returns when ctx ends. A non-nil error (other than
// ctx's) is logged as "<Name> stopped".
type Component struct {
	Name string
	Run  func(ctx context.Context) error
}

// Wiring is what Start connects the instance to.
type Wiring struct {
	// Providers are run by the aggregator (the internal provider
	// included); each configuration they merge into is applied.
	Providers []providers.Provider
	// Generation configures every generation built: Observer, Tracing,
	// Internal (the "…@internal" handlers) and Challenges (ACME, also
	// answered by the entrypoints: HTTP-01 on the entrypoints of
	// HTTP01EntryPoints) are taken from it; Log, Stapler and the
	// entrypoint options are the instance's.
	Generation generation.Options
	// Listeners are told each configuration applied, in order, right
	// after its swap (Apply's step 7).
	Listeners []Listener
	// Inherited are the sockets of the process that started this one for a
	// binary upgrade (nil: none): the entrypoints serve on them, and once
	// they serve and the first configuration is applied, Ready tells that
	// process to drain.
	Inherited *handoff.Inherited
	// Components are started last and joined by Shutdown.
	Components []Component
}

// Start brings the instance up, in this order:
//
//  1. The generation options and listeners of w are installed and the
//     providers handed to the aggregator.
//  2. The last good configuration in the store, if any, is seeded into the
//     aggregator and applied (not saved again): it serves before any
//     provider reports.
//  3. The TCP entrypoints, then the UDP ones, are bound (or taken over from
//     w.Inherited); a bind error returns, with whatever was bound closed.
//  4. The dynamic entrypoints manager starts, and opens the listeners the
//     restored configuration asks for.
//  5. The components start: the aggregator (each merged configuration is
//     applied and saved), the certificate file watcher (a changed file
//     rebuilds the generation), the OCSP stapler, the upgrade's readiness
//     report (with w.Inherited), then w.Components.
//
// ctx bounds the components' lives (Shutdown ends them too) and the
// binding. Start must be called once; Shutdown is still needed after an
// error.
func (i *Instance) Start(ctx context.Context, w Wiring) error {
	i.mu.Lock()
	g := w.Generation
	i.genOpts.Observer, i.genOpts.Tracing, i.genOpts.Internal, i.genOpts.Challenges = g.Observer, g.Tracing, g.Internal, g.Challenges
	i.listeners = w.Listeners
	i.mu.Unlock()
	for _, p := range w.Providers {
		i.agg.Replace(p)
	}
	if len(w.Providers) == 0 {
		i.applied() // no provider will ever report
	}
	i.restore(ctx)

	tcpEPs, udpEPs := splitEntryPoints(i.static)
	tcp, err := dataplane.NewServer(i.log, i.active, tcpEPs, g.Observer)
	if err != nil {
		return err
	}
	tcp.SetChallenges(g.Challenges, HTTP01EntryPoints(i.static)...)
	tcp.SetTracing(g.Tracing) // spans for requests no router matches
	tcp.Inherit(w.Inherited)
	if err := tcp.Start(ctx); err != nil {
		return err
	}
	udp := udpproxy.NewServer(i.log, i.active, udpEPs)
	udp.Inherit(w.Inherited)
	if err := udp.Start(ctx); err != nil {
		return errors.Join(err, tcp.Shutdown(ctx))
	}
	dyn, err := entrypoints.New(i.log.With("component", "entrypoints"), i.static, tcp, udp)
	if err != nil {
		return errors.Join(err, tcp.Shutdown(ctx), udp.Shutdown(ctx))
	}
	i.tcp, i.udp = tcp, udp
	i.serveDynamic(ctx, dyn) // the restored configuration's dynamic entrypoints
	if keys := w.Inherited.Unused(); len(keys) > 0 {
		i.log.Info("upgrade: inherited sockets this configuration does not use were closed", "sockets", keys)
	}

	runCtx, cancel := context.WithCancel(ctx)
	i.cancel = cancel
	i.goRun(Component{Name: "aggregator", Run: func(ctx context.Context) error {
		return i.agg.Run(ctx, func(ctx context.Context, m *providers.Merged) { i.Apply(ctx, m); i.applied() })
	}}, runCtx)
	i.goRun(Component{Name: "certificate files", Run: func(ctx context.Context) error {
		return i.certFiles.Run(ctx, func() { i.Reapply(ctx) })
	}}, runCtx)
	i.goRun(Component{Name: "ocsp stapler", Run: i.stapler.Run}, runCtx)
	if w.Inherited != nil {
		i.goRun(Component{Name: "upgrade readiness", Run: func(ctx context.Context) error {
			return i.ready(ctx, w.Inherited)
		}}, runCtx)
	}
	for _, c := range w.Components {
		i.goRun(c, runCtx)
	}
	return nil
}

// restore seeds and applies the last good configuration of the store.
func (i *Instance) restore(ctx context.Context) {
	if i.store == nil {
		return
	}
	switch m, err := i.store.LastGood(ctx); {
	case err == nil:
		i.agg.Seed(m)
		i.apply(ctx, m, false)
		i.applied()
		i.log.Info("restored the last good configuration", "version", m.Version)
	case errors.Is(err, store.ErrNotFound):
	default:
		i.log.Warn("read the last good configuration", "error", err)
	}
}

// Applied is closed once the first configuration is applied: the store's
// last good one at Start, else the providers' first merge (at once when
// there are no providers).
func (i *Instance) Applied() <-chan struct{} { return i.first }

// applied marks the first configuration applied.
func (i *Instance) applied() { i.firstOnce.Do(func() { close(i.first) }) }

// ready tells the process that handed its sockets over that this one
// serves, once the first configuration is applied (the entrypoints
// already listen when it runs).
func (i *Instance) ready(ctx context.Context, in *handoff.Inherited) error {
	select {
	case <-i.first:
	case <-ctx.Done():
		return nil
	}
	if err := in.Ready(); err != nil {
		return fmt.Errorf("tell the old process this one serves: %w", err)
	}
	i.log.Info("upgrade: serving; the old process drains", "pid", os.Getpid())
	return nil
}

// goRun runs c under ctx, joined by Shutdown.
func (i *Instance) goRun(c Component, ctx context.Context) {
	i.wg.Go(func() {
		if err := c.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			i.log.Error(c.Name+" stopped", "error", err)
		}
	})
}

// Sockets duplicates every listening socket, TCP (HTTP/3 included) and
// UDP, for the process a binary upgrade starts (handoff.Socket keys).
// The caller closes the files.
func (i *Instance) Sockets() ([]handoff.Socket, error) {
	if i.tcp == nil {
		return nil, errors.New("not started")
	}
	socks, err := i.tcp.Sockets()
	if err != nil {
		return nil, err
	}
	u, err := i.udp.Sockets()
	if err != nil {
		for _, s := range socks {
			_ = s.File.Close()
		}
		return nil, err
	}
	return append(socks, u...), nil
}

// HandedOver tells the entrypoints that the upgraded process now serves on
// their sockets: the Shutdown that follows serves the connections
// accepted but silent so far instead of cutting them
// (dataplane.Server.HandedOver).
func (i *Instance) HandedOver() {
	if i.tcp != nil {
		i.tcp.HandedOver()
	}
}

// ShutdownBound is how long the TCP entrypoints' drain may take at most
// (dataplane.Server.ShutdownBound: after HandedOver, upgraded connections
// get upgradedGraceTimeOut); 0 before Start.
func (i *Instance) ShutdownBound() time.Duration {
	if i.tcp == nil {
		return 0
	}
	return i.tcp.ShutdownBound()
}

// Shutdown stops the instance, in this order:
//
//  1. The TCP and UDP entrypoints stop accepting and drain, within their
//     grace periods and ctx (dataplane.Server.Shutdown).
//  2. The components' context ends (providers, watchers, those of Start's
//     Wiring) and Shutdown waits for every one to return.
//  3. The live generation is retired, then the pool (health checkers,
//     idle upstream connections), then the store is closed.
//
// It returns the drains that did not finish within ctx. Shutdown is also
// the cleanup after New alone or a failed Start; calls after the first
// return its result at once.
func (i *Instance) Shutdown(ctx context.Context) error {
	i.shutdown.Do(func() { i.shutdownErr = i.stop(ctx) })
	return i.shutdownErr
}

// stop is Shutdown's steps.
func (i *Instance) stop(ctx context.Context) error {
	var errs []error
	if i.tcp != nil {
		if err := i.tcp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("entrypoints: %w", err))
		}
		if err := i.udp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("udp entrypoints: %w", err))
		}
	}
	if i.cancel != nil {
		i.cancel()
	}
	i.wg.Wait()
	i.mu.Lock()
	if i.gen != nil {
		i.gen.Close()
		i.gen = nil
	}
	i.mu.Unlock()
	i.pool.Close()
	if i.store != nil {
		if err := i.store.Close(); err != nil {
			i.log.Warn("close the store", "error", err)
		}
	}
	return errors.Join(errs...)
}
