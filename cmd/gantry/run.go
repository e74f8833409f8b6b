package main

import (
	"cmp"
	"context"
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
	"syscall"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dashboard"
	"github.com/gantry-proxy/gantry/dataplane/handoff"
	"github.com/gantry-proxy/gantry/instance"
	"github.com/gantry-proxy/gantry/internal/exepages"
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

// serve runs one Gantry process (design.md §2.4): it wires an
// instance.Instance to the providers, the internal services and the
// telemetry c configures, starts it (the last good configuration serves
// before any provider reports), then follows the signals until it returns:
// nil after a graceful shutdown on SIGTERM/SIGINT (or ctx's end), or after
// draining once SIGUSR2 started a new binary that serves (upgrade.go).
//
// Started by an upgrade (handoff.EnvFDs set), it serves on the inherited
// sockets and tells the old process it is ready once its entrypoints serve
// and its first configuration is applied (instance.Wiring.Inherited).
//
// SIGHUP, or a change of ro.file, reloads the static configuration live
// (reload.go); SIGUSR1 reopens the access log.
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
	defer inherited.Unused() // sockets left when serve fails early

	p := &process{log: log, fb: fb, file: ro.file, sigs: sigs, staticChanged: make(chan struct{}, 1)}
	p.exe, p.exeErr = os.Executable() // the path: SIGUSR2 runs what is there then
	defer p.close()
	if err := p.start(ctx, c, ro, inherited); err != nil {
		return err
	}
	p.run(ctx)
	return nil
}

// process is what serve holds while it runs.
type process struct {
	log           *slog.Logger
	fb            *flushBudget // the shutdown's telemetry flush budget
	file          string       // the static configuration file ("": none)
	sigs          chan os.Signal
	staticChanged chan struct{} // the static configuration file changed
	exe           string        // for SIGUSR2
	exeErr        error

	db   *store.DB
	inst *instance.Instance
	in   *internals
	tel  *telemetry
	rl   *reloader
}

// start opens the store, builds the instance and what it is wired to (the
// providers, the ACME manager, the internal services, the telemetry, the
// cluster registration, the static file watcher), and starts it.
func (p *process) start(ctx context.Context, c *static.Configuration, ro reloadOptions, inherited *handoff.Inherited) error {
	log := p.log
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
	p.db = db
	p.inst = instance.New(c, instance.Options{Log: log, Store: db,
		Counts: func(t *router.Table) *store.Counts { return dashboard.Counts(t) }})
	agg := p.inst.Providers()

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
	rl := &reloader{log: log, level: ro.level, load: ro.load, file: ro.file, cfg: c, agg: agg, inst: p.inst, certs: certs, kv: db, fileReload: set.fileReload}
	rl.status = static.ReloadStatus{Revision: 1, File: ro.file, Since: time.Now()}
	p.rl = rl
	mig := &migrationHolder{}
	for _, pr := range set.list {
		mig.set(pr)
	}
	src := internalSources{active: p.inst.Active(), pool: p.inst.Pool(), sources: agg, history: db, certificates: certs,
		reloads: rl.statusNow, started: time.Now(), migration: mig, dynamic: p.inst.DynamicEntryPoints}
	var reg *consul.Registration
	if c.Cluster != nil && c.Cluster.Consul != nil {
		if reg, err = newRegistration(c, log); err != nil {
			return err
		}
		src.cluster = reg
	}
	if p.in, err = newInternals(c, log, src); err != nil {
		return err
	}
	p.in.flush = p.fb
	rl.in, rl.src = p.in, src

	w := instance.Wiring{Providers: set.list, Inherited: inherited}
	if p.tel, err = openTelemetry(ctx, c, log, p.in, p.fb, certs, &w); err != nil {
		return err
	}
	w.Listeners = applyListeners(p.inst, p.in, certs, reg)
	if reg != nil {
		w.Components = append(w.Components, instance.Component{Name: "cluster registration", Run: reg.Run})
	}
	if p.file != "" {
		if sw, err := newStaticWatcher(p.file, log); err == nil {
			w.Components = append(w.Components, p.staticWatcher(sw))
		} else {
			log.Warn("static configuration file not watched; SIGHUP reloads it", "error", err)
		}
	}
	w.Components = append(w.Components, startPagesReleaser(p.inst.Applied(), log))
	return p.inst.Start(ctx, w)
}

// startPagesReleaser is the component that, once the first configuration
// is applied (applied closed), gives back the executable's start-up pages
// (exepages.Release): what the package initialisers, the binding and the
// first compilation touched stays in the page cache, but out of gantry's
// RSS until used again. It returns at once after.
func startPagesReleaser(applied <-chan struct{}, log *slog.Logger) instance.Component {
	return instance.Component{Name: "start-up pages", Run: func(ctx context.Context) error {
		select {
		case <-applied:
		case <-ctx.Done():
			return nil
		}
		n, err := exepages.Release()
		if err != nil {
			return fmt.Errorf("give back the executable's start-up pages: %w", err)
		}
		log.Debug("gave back the executable's start-up pages", "bytes", n)
		return nil
	}}
}

// staticWatcher is the component telling run that the static
// configuration file changed (staticChanged).
func (p *process) staticWatcher(sw *staticWatcher) instance.Component {
	return instance.Component{Name: "static configuration watcher", Run: func(ctx context.Context) error {
		err := sw.run(ctx, func() {
			select {
			case p.staticChanged <- struct{}{}:
			default:
			}
		})
		if err != nil {
			p.log.Warn("static configuration file not watched; SIGHUP reloads it", "error", err)
		}
		return nil
	}}
}

// close releases what start opened, also after a failed start: the
// telemetry's flushes, the internal services, then the instance (its
// generation, pool and store; nothing left to drain after run).
func (p *process) close() {
	if p.tel != nil {
		p.tel.close()
	}
	if p.in != nil {
		p.in.close()
	}
	switch {
	case p.inst != nil:
		_ = p.inst.Shutdown(context.Background())
	case p.db != nil:
		_ = p.db.Close()
	}
}

// run follows the signals until the process is to stop, then shuts the
// instance down (shutdown).
//
//   - SIGUSR1 reopens the access log; SIGHUP, or a change of the static
//     file, reloads the static configuration (deferred while a binary
//     upgrade runs), SIGHUP the file provider too.
//   - SIGUSR2 starts a binary upgrade; once the new process serves, this
//     one drains its connections (HandedOver) and stops. A failed upgrade
//     keeps it serving.
//   - SIGTERM, SIGINT or ctx's end stops it.
func (p *process) run(ctx context.Context) {
	log := p.log
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup // the upgrade and the second signal's watch
	defer wg.Wait()
	up := &upgrader{log: log, exe: p.exe, store: p.db, timeout: upgradeReadyTimeout, sockets: p.inst.Sockets}
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
		p.rl.reload(runCtx, trigger)
	}
	for {
		select {
		case s := <-p.sigs:
			switch s {
			case syscall.SIGUSR1:
				p.tel.reopen()
			case syscall.SIGUSR2:
				switch {
				case p.exeErr != nil:
					log.Error("SIGUSR2: binary upgrade impossible: executable path unknown", "error", p.exeErr)
				case upgrading:
					log.Warn("SIGUSR2: a binary upgrade is already in progress")
				default:
					upgrading = true
					log.Info("SIGUSR2: upgrading the binary", "executable", p.exe)
					wg.Go(func() {
						pid, err := up.run(upCtx)
						if err == nil {
							log.Info("upgrade: new process serves; draining", "pid", pid)
						}
						upgraded <- err
					})
				}
			case syscall.SIGHUP:
				log.Info("SIGHUP: reloading the static configuration and the file provider")
				reload(triggerSignal)
				if p.rl.fileReload != nil {
					p.rl.fileReload()
				}
			default:
				log.Info("shutting down", "signal", s.String())
				upCancel() // an upgrade in progress is abandoned (its process killed)
				p.shutdown(ctx, &wg)
				return
			}
		case <-p.staticChanged:
			log.Info("static configuration file changed; reloading it", "file", p.file)
			reload(triggerFile)
		case err := <-upgraded:
			upgrading = false
			if err == nil {
				p.inst.HandedOver() // connections it accepted last are served
				p.shutdown(ctx, &wg)
				return
			}
			log.Error("upgrade failed; this process keeps serving", "error", err)
			if deferred != "" {
				reload(deferred)
				deferred = ""
			}
		case <-ctx.Done():
			log.Info("shutting down", "reason", context.Cause(ctx))
			upCancel()
			p.shutdown(ctx, &wg)
			return
		}
	}
}

// shutdown drains the instance within the longest grace period of the
// running entrypoints plus shutdownMargin; a second SIGTERM/SIGINT cuts
// the grace period and the telemetry flush. The API is closed first: its
// WebSockets would otherwise hold the grace period (the OTLP push waits
// until after the drain, close).
func (p *process) shutdown(ctx context.Context, wg *sync.WaitGroup) {
	if p.in.ping != nil {
		p.in.ping.terminating.Store(true)
	}
	p.in.closeAPI()
	// After an upgrade, upgraded connections get upgradedGraceTimeOut.
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), max(maxGrace(p.rl.cfg), p.inst.ShutdownBound())+shutdownMargin)
	defer scancel()
	wg.Go(func() { // a second SIGTERM/SIGINT (Ctrl-C again) cuts the grace period
		for {
			select {
			case s := <-p.sigs:
				if s != syscall.SIGHUP && s != syscall.SIGUSR1 && s != syscall.SIGUSR2 {
					p.log.Warn("second signal: closing connections now", "signal", s.String())
					scancel()
					p.fb.cut() // and no telemetry flush after the drain
					return
				}
			case <-sctx.Done():
				return
			}
		}
	})
	if err := p.inst.Shutdown(sctx); err != nil {
		p.log.Warn("shutdown did not finish in time", "error", err)
	}
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
		if ep == nil || instance.IsUDP(ep) {
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
