package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane"
	tlscerts "github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/entrypoints"
	"github.com/gantry-proxy/gantry/dataplane/handoff"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/dataplane/udpproxy"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/acme"
	"github.com/gantry-proxy/gantry/providers/consul"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/store"
)

// defaultStorePath is where the last good configuration is kept when
// store.path is not set: in the working directory.
const defaultStorePath = "gantry.db"

// shutdownMargin is added to the longest entrypoint grace period to bound
// the whole shutdown.
const shutdownMargin = 5 * time.Second

// runCmd loads the configuration and serves until SIGTERM or SIGINT (or a
// binary upgrade on SIGUSR2 hands over to the new process).
func runCmd(ctx context.Context, c cliArgs, environ []string, stderr io.Writer) int {
	l, err := loadStatic(c, environ)
	if err != nil {
		fmt.Fprintf(stderr, "gantry: static configuration: %v\n", err)
		return 1
	}
	level := new(slog.LevelVar)
	fb := newFlushBudget(5 * time.Second) // the OTLP flushes at shutdown, together
	log, closer, err := newLoggerLevel(l.Config.Log, stderr, level, fb)
	if err != nil {
		fmt.Fprintf(stderr, "gantry: %v\n", err)
		return 1
	}
	defer closer.Close()
	for _, w := range l.Warnings {
		log.Warn("static configuration option ignored", "warning", w)
	}
	log.Info("starting gantry", "version", versionString(), "configFile", l.File, "sources", l.Sources)
	ro := reloadOptions{file: l.File, level: level, flush: fb, load: func() (*loaded, error) { return loadStatic(c, environ) }}
	if err := serve(ctx, l.Config, log, ro); err != nil {
		log.Error("gantry stopped", "error", err)
		return 1
	}
	log.Info("gantry stopped")
	return 0
}

// serve wires and runs everything (design.md §2.4): store, pool, the last
// good configuration compiled and swapped in before any provider reports,
// the entrypoints, then the providers through the aggregator. It returns
// nil after a graceful shutdown on SIGTERM/SIGINT (or ctx's end), or after
// draining once SIGUSR2 started a new binary that serves (upgrade.go).
//
// Started by an upgrade (handoff.EnvFDs set), it serves on the inherited
// sockets and tells the old process it is ready once its entrypoints serve
// and its first configuration is applied.
//
// SIGHUP, or a change of ro.file, reloads the static configuration live
// (reload.go).
func serve(ctx context.Context, c *static.Configuration, log *slog.Logger, ro reloadOptions) error {
	fb := ro.flush
	if fb == nil {
		fb = newFlushBudget(5 * time.Second)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)
	inherited, err := handoff.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	_ = os.Unsetenv(handoff.EnvFDs)
	_ = os.Unsetenv(handoff.EnvReady)
	defer inherited.Unused()       // sockets left when serve fails early
	exe, exeErr := os.Executable() // the path: SIGUSR2 runs what is there then

	path, history := defaultStorePath, 0
	if c.Store != nil {
		if c.Store.Path != "" {
			path = c.Store.Path
		}
		history = c.Store.History
	}
	db, err := store.Open(path, history, log.With("component", "store"))
	if err != nil {
		return err
	}
	defer db.Close()

	pool := dataplane.NewPool(log.With("component", "pool"), dataplane.PoolOptions{ServersTransport: c.ServersTransport})
	defer pool.Close()
	set, err := buildProviders(c, log)
	if err != nil {
		return err
	}
	certs := &certSwitch{} // the ACME manager of the running resolvers
	if len(c.CertificatesResolvers) > 0 {
		// Invalid resolvers are skipped (Traefik's behaviour) and stay
		// listed in /api/problems; the valid ones run.
		m, err := acme.New(c, db, log.With("component", "acme"), versionString())
		if err != nil {
			log.Error("certificate resolvers skipped", "error", err)
		}
		certs.set(m)
		set.list = append(set.list, m)
	}
	var debounce time.Duration
	if c.Providers != nil && c.Providers.ProvidersThrottleDuration != nil {
		debounce = c.Providers.ProvidersThrottleDuration.D()
	}
	agg := providers.NewAggregator(log, debounce, set.list...)
	active := router.NewActive()
	rl := &reloader{log: log, level: ro.level, load: ro.load, file: ro.file, cfg: c, agg: agg, certs: certs, kv: db, fileReload: set.fileReload}
	rl.status = static.ReloadStatus{Revision: 1, File: ro.file, Since: time.Now()}
	var dynamic atomic.Pointer[entrypoints.Manager] // set once the entrypoints listen
	mig := &migrationHolder{}
	for _, p := range set.list {
		mig.set(p)
	}
	src := internalSources{active: active, pool: pool, sources: agg, history: db, certificates: certs, reloads: rl.statusNow, started: time.Now(), migration: mig,
		dynamic: func() map[string]*static.EntryPoint {
			if m := dynamic.Load(); m != nil {
				return m.Serving()
			}
			return nil
		}}
	var reg *consul.Registration
	if c.Cluster != nil && c.Cluster.Consul != nil {
		if reg, err = newRegistration(c, log); err != nil {
			return err
		}
		src.cluster = reg
	}
	in, err := newInternals(c, log, src)
	if err != nil {
		return err
	}
	in.flush = fb
	defer in.close()

	observers := in.observers()
	var accessLog *observe.AccessLog
	reopen := func() {} // SIGUSR1: reopen the access log file (logrotate)
	if c.AccessLog != nil {
		w, closeW, err := accessLogWriter(c.AccessLog)
		if err != nil {
			return err
		}
		defer closeW()
		if _, ok := w.(*observe.File); ok {
			reopen = func() { // the lines buffered so far go to the renamed file first
				if err := accessLog.Reopen(); err != nil {
					log.Error("SIGUSR1: reopen the access log", "error", err)
					return
				}
				log.Info("SIGUSR1: reopened the access log", "path", c.AccessLog.FilePath)
			}
		}
		if accessLog, err = observe.NewAccessLog(w, c.AccessLog); err != nil {
			return err
		}
		if c.AccessLog.OTLP != nil {
			l, err := observe.NewOTLPLogs(ctx, "accessLog.otlp", c.AccessLog.OTLP, versionString())
			if err != nil {
				return err
			}
			defer func() { // flush the records still queued, bounded
				if err := l.Shutdown(fb.context()); err != nil {
					log.Warn("accessLog.otlp: flush at shutdown", "error", err)
				}
			}()
			accessLog.SetOTLP(l)
		}
		observers = append(observers, accessLog)
	}
	obs := observe.Tee(observers...)
	var tracing *observe.Tracing
	if c.Tracing != nil {
		if tracing, err = observe.NewTracing(ctx, c.Tracing); err != nil {
			return err
		}
		defer func() { // flush the spans still queued, bounded
			if err := tracing.Shutdown(fb.context()); err != nil {
				log.Warn("tracing: flush at shutdown", "error", err)
			}
		}()
	}

	app := &applier{
		log:    log,
		pool:   pool,
		active: active,
		store:  db,
		genOpts: dataplane.GenerationOptions{
			Log:                   log,
			Observer:              obs,
			Tracing:               tracing,
			Internal:              in.handlers,
			EntryPointMiddlewares: entryPointMiddlewares(c),
			NotFound:              entryPointNotFound(c),
		},
		ropts: routerOptions(c),
		epTLS: entryPointTLS(c),
	}
	if in.metrics != nil || in.otlp != nil {
		app.reloaded = func(at time.Time) {
			in.reloaded(at)
			if in.metrics == nil {
				return
			}
			// Drop the series of routers and services that are gone.
			if m := active.Load().Merged(); m != nil && m.Config != nil && m.Config.HTTP != nil {
				c := m.Config
				in.metrics.Keep(func(n string) bool { _, ok := c.HTTP.Routers[n]; return ok },
					func(n string) bool { _, ok := c.HTTP.Services[n]; return ok })
			} else {
				in.metrics.Keep(func(string) bool { return false }, func(string) bool { return false })
			}
		}
	}
	app.certFiles = tlscerts.NewCertFiles(log.With("component", "certfiles"))
	stapler := tlscerts.NewStapler(log.With("component", "ocsp"), nil)
	app.genOpts.Stapler = stapler
	app.genOpts.Challenges = certs
	app.observe = certs.Observe
	defer app.close()
	if reg != nil {
		app.applied = reg.SetVersion
	}

	first := make(chan struct{}) // closed at the first configuration applied
	var firstOnce sync.Once
	applied := func() { firstOnce.Do(func() { close(first) }) }
	if len(set.list) == 0 {
		applied() // no provider will ever report
	}
	switch m, err := db.LastGood(ctx); {
	case err == nil:
		agg.Seed(m)
		app.apply(ctx, m, false)
		applied()
		log.Info("restored the last good configuration", "version", m.Version)
	case errors.Is(err, store.ErrNotFound):
	default:
		log.Warn("read the last good configuration", "error", err)
	}

	tcpEPs, udpEPs := splitEntryPoints(c)
	srv, err := dataplane.NewServer(log, active, tcpEPs, obs)
	if err != nil {
		return err
	}
	srv.SetChallenges(certs, http01EntryPoints(c)...)
	srv.SetTracing(tracing) // spans for requests no router matches
	srv.Inherit(inherited)
	if err := srv.Start(ctx); err != nil {
		return err
	}
	udpSrv := udpproxy.NewServer(log, active, udpEPs)
	udpSrv.Inherit(inherited)
	if err := udpSrv.Start(ctx); err != nil {
		_ = srv.Shutdown(ctx)
		return err
	}
	dyn, err := entrypoints.New(log.With("component", "entrypoints"), c, srv, udpSrv)
	if err != nil {
		_ = srv.Shutdown(ctx)
		_ = udpSrv.Shutdown(ctx)
		return err
	}
	dynamic.Store(dyn)
	app.serveDynamic(ctx, dyn) // the stored configuration's dynamic entrypoints
	if keys := inherited.Unused(); len(keys) > 0 {
		log.Info("upgrade: inherited sockets this configuration does not use were closed", "sockets", keys)
	}
	rl.app, rl.in, rl.src, rl.eps, rl.udp = app, in, src, srv, udpSrv

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = agg.Run(runCtx, func(ctx context.Context, m *providers.Merged) { app.apply(ctx, m, true); applied() })
	})
	if inherited != nil {
		wg.Go(func() {
			select {
			case <-first:
			case <-runCtx.Done():
				return
			}
			if err := inherited.Ready(); err != nil {
				log.Error("upgrade: tell the old process this one serves", "error", err)
				return
			}
			log.Info("upgrade: serving; the old process drains", "pid", os.Getpid())
		})
	}
	up := &upgrader{log: log, exe: exe, store: db, timeout: upgradeReadyTimeout,
		sockets: []func() ([]handoff.Socket, error){srv.Sockets, udpSrv.Sockets}}
	upCtx, upCancel := context.WithCancel(runCtx)
	defer upCancel()
	upgraded := make(chan error, 1)
	upgrading := false
	// A static reload asked for during a binary upgrade waits for its end
	// (the new process reads the file itself; its sockets were taken
	// before): "" none, else its trigger.
	deferred := ""
	reload := func(trigger string) {
		if upgrading {
			log.Info("static configuration reload deferred: a binary upgrade is in progress", "trigger", trigger)
			deferred = trigger
			return
		}
		rl.reload(runCtx, trigger)
	}
	wg.Go(func() {
		_ = app.certFiles.Run(runCtx, func() { app.reapply(runCtx) })
	})
	wg.Go(func() { _ = stapler.Run(runCtx) })
	if reg != nil {
		wg.Go(func() { _ = reg.Run(runCtx) })
	}
	if accessLog != nil {
		wg.Go(func() {
			if err := accessLog.Run(runCtx); err != nil {
				log.Error("access log stopped", "error", err)
			}
		})
	}
	staticChanged := make(chan struct{}, 1)
	if ro.file != "" {
		sw, err := newStaticWatcher(ro.file, log)
		if err == nil {
			wg.Go(func() {
				err := sw.run(runCtx, func() {
					select {
					case staticChanged <- struct{}{}:
					default:
					}
				})
				if err != nil {
					log.Warn("static configuration file not watched; SIGHUP reloads it", "error", err)
				}
			})
		} else {
			log.Warn("static configuration file not watched; SIGHUP reloads it", "error", err)
		}
	}

wait:
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGUSR1 {
				reopen()
				continue
			}
			if s == syscall.SIGUSR2 {
				switch {
				case exeErr != nil:
					log.Error("SIGUSR2: binary upgrade impossible: executable path unknown", "error", exeErr)
				case upgrading:
					log.Warn("SIGUSR2: a binary upgrade is already in progress")
				default:
					upgrading = true
					log.Info("SIGUSR2: upgrading the binary", "executable", exe)
					wg.Go(func() {
						pid, err := up.run(upCtx)
						if err == nil {
							log.Info("upgrade: new process serves; draining", "pid", pid)
						}
						upgraded <- err
					})
				}
				continue
			}
			if s == syscall.SIGHUP {
				log.Info("SIGHUP: reloading the static configuration and the file provider")
				reload(triggerSignal)
				if rl.fileReload != nil {
					rl.fileReload()
				}
				continue
			}
			log.Info("shutting down", "signal", s.String())
			break wait
		case <-staticChanged:
			log.Info("static configuration file changed; reloading it", "file", ro.file)
			reload(triggerFile)
		case err := <-upgraded:
			upgrading = false
			if err == nil {
				srv.HandedOver() // connections it accepted last are served
				break wait
			}
			log.Error("upgrade failed; this process keeps serving", "error", err)
			if deferred != "" {
				reload(deferred)
				deferred = ""
			}
		case <-ctx.Done():
			log.Info("shutting down", "reason", context.Cause(ctx))
			break wait
		}
	}
	upCancel() // an upgrade in progress is abandoned (its process killed)
	if in.ping != nil {
		in.ping.terminating.Store(true)
	}
	in.closeAPI() // dashboard WebSockets would otherwise hold the grace period; the OTLP push is deferred past the drain
	// After an upgrade, upgraded connections get upgradedGraceTimeOut.
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), max(maxGrace(rl.cfg), srv.ShutdownBound())+shutdownMargin)
	defer scancel()
	wg.Go(func() { // a second SIGTERM/SIGINT (Ctrl-C again) cuts the grace period
		for {
			select {
			case s := <-sigs:
				if s != syscall.SIGHUP && s != syscall.SIGUSR1 && s != syscall.SIGUSR2 {
					log.Warn("second signal: closing connections now", "signal", s.String())
					scancel()
					fb.cut() // and no telemetry flush after the drain
					return
				}
			case <-sctx.Done():
				return
			}
		}
	})
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown did not finish in time", "error", err)
	}
	if err := udpSrv.Shutdown(sctx); err != nil {
		log.Warn("udp shutdown did not finish in time", "error", err)
	}
	scancel()
	cancel()
	wg.Wait()
	return nil
}

// maxGrace returns the longest requestAcceptGraceTimeout + graceTimeOut of
// all entrypoints (graceTimeOut defaults to 10s).
func maxGrace(c *static.Configuration) time.Duration {
	const defaultGrace = 10 * time.Second
	longest := defaultGrace
	for _, ep := range c.EntryPoints {
		g := defaultGrace
		var accept time.Duration
		if ep.Transport != nil && ep.Transport.LifeCycle != nil {
			if lc := ep.Transport.LifeCycle; lc.GraceTimeOut > 0 {
				g = lc.GraceTimeOut.D()
			}
			accept = ep.Transport.LifeCycle.RequestAcceptGraceTimeout.D()
		}
		longest = max(longest, g+accept)
	}
	return longest
}

// accessLogWriter opens accessLog.filePath for appending, or returns stdout.
func accessLogWriter(c *static.AccessLog) (io.Writer, func(), error) {
	if c.FilePath == "" {
		return os.Stdout, func() {}, nil
	}
	f, err := observe.OpenFile(c.FilePath)
	if err != nil {
		return nil, nil, fmt.Errorf("accessLog.filePath: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// newRegistration fills cluster's defaults (instanceID "<hostname>-<port>",
// port: registrationPort's) and builds the Consul registration.
func newRegistration(c *static.Configuration, log *slog.Logger) (*consul.Registration, error) {
	cl := *c.Cluster
	if cl.Port == 0 {
		cl.Port = registrationPort(c)
	}
	if cl.InstanceID == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("cluster.instanceID: unset and no hostname: %w", err)
		}
		cl.InstanceID = h + "-" + strconv.Itoa(cl.Port)
	}
	return consul.NewRegistration(&cl, log)
}

// registrationPort is the port clients of the instance are sent to (Consul
// DNS, load balancers): the first TCP entrypoint by name that serves
// traffic, not one that serves only Gantry itself: "traefik" (the API's)
// and the entrypoints of ping and metrics.prometheus. With no other, the
// first TCP entrypoint; 0 with none.
func registrationPort(c *static.Configuration) int {
	internal := map[string]bool{"traefik": true}
	if c.Ping != nil {
		internal[cmp.Or(c.Ping.EntryPoint, "traefik")] = true
	}
	if c.Metrics != nil && c.Metrics.Prometheus != nil {
		internal[cmp.Or(c.Metrics.Prometheus.EntryPoint, "traefik")] = true
	}
	first := 0
	for _, name := range slices.Sorted(maps.Keys(c.EntryPoints)) {
		ep := c.EntryPoints[name]
		if ep == nil || isUDP(ep) {
			continue
		}
		addr, _, _ := strings.Cut(ep.Address, "/")
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			continue
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			continue
		}
		if !internal[name] {
			return port
		}
		if first == 0 {
			first = port
		}
	}
	return first
}

// http01EntryPoints lists the entrypoints the ACME resolvers answer
// HTTP-01 challenges on (certificatesResolvers.<r>.acme.httpChallenge).
func http01EntryPoints(c *static.Configuration) []string {
	var out []string
	for _, r := range c.CertificatesResolvers {
		if r != nil && r.ACME != nil && r.ACME.HTTPChallenge != nil && r.ACME.HTTPChallenge.EntryPoint != "" {
			out = append(out, r.ACME.HTTPChallenge.EntryPoint)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
