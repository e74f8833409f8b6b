package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dashboard"
	"github.com/gantry-proxy/gantry/instance"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/acme"
	"github.com/gantry-proxy/gantry/providers/builtin"
)

// maxReloadsKept bounds the reloads /api/static lists.
const maxReloadsKept = 20

// reloader applies a static configuration read again (SIGHUP, or its file
// changed) to the running process (issue 18; Traefik #1188): it diffs the
// new configuration against the running one (static.Diff) and applies, by
// section:
//
//   - entryPoints.<name> (TCP and UDP): added ones are bound before the routes
//     naming them are swapped in; changed ones are replaced (on the same
//     address the new settings take over the very listening sockets, see
//     dataplane.Server.ReplaceEntryPoint; on another address the new one is
//     bound first); removed ones stop accepting once the new routing table
//     is in and drain within their graceTimeOut. Unchanged entrypoints are
//     not touched: same sockets, connections and WebSockets kept.
//   - providers.<kind>: a changed provider is restarted (its last snapshot
//     serves until the new instance publishes), an added one started, a
//     removed one stopped and its routes dropped; unchanged ones are not
//     touched. providersThrottleDuration applies to the next merge.
//   - certificatesResolvers: any change restarts the ACME manager with the
//     new resolvers (certificates are kept in the store and reused).
//   - api and ping: the API is rebuilt (security, basePath, dashboard,
//     debug) and served from the next routing table; its address is the
//     traefik entrypoint's, so moving it is an entrypoint change (new bound,
//     then old closed). The API is rebuilt after any applied change, so it
//     shows the new configuration; dashboard WebSockets then reconnect.
//   - log.level, core, global: applied.
//
// Everything else (log format and file, accessLog, metrics, tracing, store,
// cluster, serversTransport) needs a restart: each such
// change is refused, logged and listed as a problem and in /api/static,
// naming the field, and its running value is kept. A configuration that
// does not load (syntax, an invalid option, a provider that cannot be
// built) changes nothing and is reported with its file and line.
//
// reload runs on serve's goroutine only; status may be called from any.
type reloader struct {
	log   *slog.Logger
	level *slog.LevelVar
	load  func() (*loaded, error)
	file  string

	cfg        *static.Configuration // what runs (refused changes left out)
	agg        *providers.Aggregator
	inst       *instance.Instance
	in         *internals
	src        internalSources
	certs      *certSwitch
	kv         acme.KV
	fileReload func()
	refused    []static.Refusal // by the last reload that loaded

	mu     sync.Mutex // guards status
	status static.ReloadStatus
}

// Reload triggers (static.Reload.Trigger).
const (
	triggerSignal = "SIGHUP"
	triggerFile   = "file"
)

// statusNow returns a copy of the reload status (/api/static).
func (r *reloader) statusNow() static.ReloadStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.status
	s.Reloads = slices.Clone(s.Reloads)
	return s
}

// record adds rl to the reload status. Each outcome is recorded before its
// log line is written, so /api/static lists a reload the log has reported.
func (r *reloader) record(rl static.Reload) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rl.Outcome == static.ReloadApplied || rl.Outcome == static.ReloadPartial {
		r.status.Revision++
		r.status.Since = rl.At
	}
	rl.Revision = r.status.Revision
	r.status.Reloads = append([]static.Reload{rl}, r.status.Reloads...)
	if len(r.status.Reloads) > maxReloadsKept {
		r.status.Reloads = r.status.Reloads[:maxReloadsKept]
	}
}

// restartOnly says why a section cannot change live, by Change.Path or its
// first element.
var restartOnly = map[string]string{
	"log":              "the log format and file are opened at start",
	"accessLog":        "the access log is opened at start",
	"metrics":          "the metrics exporter is wired into every entrypoint at start",
	"tracing":          "the tracer is wired into every entrypoint at start",
	"store":            "the store is opened (and locked) at start",
	"cluster":          "the Consul registration is made at start",
	"serversTransport": "the connection pool to servers is built at start",
}

// plan splits changes into those to apply and those refused (with why).
func (r *reloader) plan(changes []static.Change, next *static.Configuration) (apply []static.Change, refused []static.Refusal) {
	for _, ch := range changes {
		if why, ok := restartOnly[ch.Path]; ok {
			refused = append(refused, static.Refusal{Change: ch, Reason: why + "; restart Gantry to apply it"})
			continue
		}
		apply = append(apply, ch)
	}
	return apply, refused
}

// reload reads the static configuration again and applies what changed
// (see reloader). It returns when the new configuration serves; removed
// entrypoints drain in the background.
func (r *reloader) reload(ctx context.Context, trigger string) {
	at := time.Now()
	l, err := r.load()
	if err != nil {
		r.publishInternal(r.cfg, r.refused, err)
		r.record(static.Reload{At: at, Trigger: trigger, Outcome: static.ReloadInvalid, Error: err.Error()})
		r.log.Error("static configuration reload: invalid, nothing changed", "trigger", trigger, "error", err)
		return
	}
	for _, w := range l.Warnings {
		r.log.Warn("static configuration option ignored", "warning", w)
	}
	next := l.Config
	changes := static.Diff(r.cfg, next)
	if len(changes) == 0 {
		r.refused = nil
		r.publishInternal(r.cfg, nil, nil)
		r.record(static.Reload{At: at, Trigger: trigger, Outcome: static.ReloadUnchanged})
		r.log.Info("static configuration reload: unchanged", "trigger", trigger)
		return
	}
	apply, refused := r.plan(changes, next)

	// Everything that can fail is built first: a provider that cannot be
	// built makes the whole file invalid, and nothing changes.
	built, err := r.buildChanged(apply, next)
	if err != nil {
		err = fmt.Errorf("%s: %w", l.File, err)
		r.publishInternal(r.cfg, r.refused, err)
		r.record(static.Reload{At: at, Trigger: trigger, Outcome: static.ReloadInvalid, Error: err.Error()})
		r.log.Error("static configuration reload: invalid, nothing changed", "trigger", trigger, "error", err)
		return
	}

	// Entrypoints: new and changed ones first, removed ones once the new
	// table is in (ReloadStatic).
	failed := r.inst.OpenEntryPoints(ctx, apply, r.cfg, next)
	apply = slices.DeleteFunc(apply, func(ch static.Change) bool {
		err := failed[ch.Path]
		if err != nil {
			refused = append(refused, static.Refusal{Change: ch, Reason: err.Error()})
		}
		return err != nil
	})
	eff := compose(next, r.cfg, refused)

	var resolvers bool
	for _, ch := range apply {
		resolvers = resolvers || strings.HasPrefix(ch.Path, "certificatesResolvers.")
	}
	if resolvers {
		r.restartResolvers(eff)
	}

	// The API (and ping), rebuilt for the configuration now running.
	oldAPI := r.in.api
	handlers, api, err := r.rebuildInternals(eff)
	if err != nil && !reflect.DeepEqual(eff.API, r.cfg.API) {
		// The new api section is unusable (api.usersFile…): keep the old one.
		i := slices.IndexFunc(apply, func(c static.Change) bool { return c.Path == "api" })
		if i >= 0 {
			refused = append(refused, static.Refusal{Change: apply[i], Reason: err.Error()})
			apply = slices.Delete(apply, i, i+1)
		}
		eff.API = r.cfg.API
		handlers, api, err = r.rebuildInternals(eff)
	}
	if err != nil {
		r.log.Error("static configuration reload: the API could not be rebuilt; the previous one keeps serving", "error", err)
		handlers, api = r.in.handlers, oldAPI
	}
	r.in.handlers, r.in.api = handlers, api
	r.inst.ReloadStatic(ctx, eff, handlers)
	r.publishInternal(eff, refused, nil)

	r.swapProviders(apply, built, eff)
	if lv := eff.Log; lv != nil {
		level, _ := parseLevel(lv.Level) // checked by loadStatic
		r.level.Set(level)
	} else {
		r.level.Set(slog.LevelInfo)
	}
	if oldAPI != nil && oldAPI != api {
		oldAPI.Close()
	}
	r.cfg, r.refused = eff, refused
	rl := static.Reload{At: at, Trigger: trigger, Applied: apply, Refused: refused, Outcome: static.ReloadApplied}
	switch {
	case len(apply) == 0:
		rl.Outcome = static.ReloadRefused
	case len(refused) > 0:
		rl.Outcome = static.ReloadPartial
	}
	r.record(rl)
	for _, f := range refused {
		r.log.Warn("static configuration reload: change not applied live; the running value is kept", "field", f.Path, "change", f.Kind, "reason", f.Reason)
	}
	r.log.Info("static configuration reloaded", "trigger", trigger, "outcome", rl.Outcome, "revision", r.statusNow().Revision,
		"applied", paths(apply), "refused", refusedPaths(refused), "took", time.Since(at).Round(time.Millisecond))
}

// buildChanged builds the provider of each providers.<kind> change of
// apply, for next (nil for a removed section). An error names the
// provider section.
func (r *reloader) buildChanged(apply []static.Change, next *static.Configuration) (map[string]builtProvider, error) {
	built := map[string]builtProvider{}
	for _, ch := range apply {
		kind, ok := strings.CutPrefix(ch.Path, "providers.")
		if !ok || kind == "providersThrottleDuration" {
			continue
		}
		p, reload, err := buildProvider(kind, next, r.log)
		if err != nil {
			return nil, err
		}
		built[kind] = builtProvider{p, reload}
	}
	return built, nil
}

// swapProviders applies the providers.* changes of apply: the aggregator
// runs each built provider instead of the one of its section (or stops
// it, the section gone), and takes eff's providersThrottleDuration.
func (r *reloader) swapProviders(apply []static.Change, built map[string]builtProvider, eff *static.Configuration) {
	for _, ch := range apply {
		kind, ok := strings.CutPrefix(ch.Path, "providers.")
		switch {
		case !ok:
		case kind == "providersThrottleDuration":
			var d time.Duration
			if eff.Providers != nil && eff.Providers.ProvidersThrottleDuration != nil {
				d = eff.Providers.ProvidersThrottleDuration.D()
			}
			r.agg.SetDebounce(d)
		case built[kind].p == nil:
			r.src.migration.clear(kind)
			r.agg.Remove(providerName(kind))
			if kind == "file" {
				r.fileReload = nil
			}
		default:
			r.src.migration.set(built[kind].p)
			r.agg.Replace(built[kind].p)
			if kind == "file" {
				r.fileReload = built[kind].reload
			}
		}
	}
}

// builtProvider is a provider built for a reload, with the file
// provider's Reload.
type builtProvider struct {
	p      providers.Provider
	reload func()
}

// providerName returns the name the provider of providers.<kind> runs
// under.
func providerName(kind string) string {
	for _, k := range providerKinds {
		if k.kind == kind {
			return k.name
		}
	}
	return kind
}

// compose returns next with every refused section set back to its value in
// running.
func compose(next, running *static.Configuration, refused []static.Refusal) *static.Configuration {
	eff := *next
	eff.EntryPoints = maps.Clone(next.EntryPoints)
	for _, f := range refused {
		section, name, _ := strings.Cut(f.Path, ".")
		switch section {
		case "entryPoints":
			if ep, ok := running.EntryPoints[name]; ok {
				eff.EntryPoints[name] = ep
			} else {
				delete(eff.EntryPoints, name)
			}
		case "log": // its format and file; log.level applies live
			var l static.Log
			if running.Log != nil {
				l = *running.Log
			}
			l.Level = ""
			if next.Log != nil {
				l.Level = next.Log.Level
			}
			eff.Log = nil
			if l != (static.Log{}) {
				eff.Log = &l
			}
		default:
			if name == "" { // a whole section: restartOnly's, api
				keepSection(&eff, running, section)
			}
		}
	}
	return &eff
}

// keepSection sets the field of eff whose JSON name is section (as
// static.Diff names it: "accessLog", "api") to running's. A name that is
// no field changes nothing.
func keepSection(eff, running *static.Configuration, section string) {
	e, r := reflect.ValueOf(eff).Elem(), reflect.ValueOf(running).Elem()
	for f := range e.Type().Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == section {
			e.FieldByIndex(f.Index).Set(r.FieldByIndex(f.Index))
			return
		}
	}
}

// restartResolvers replaces the ACME manager by one for eff's resolvers
// (none: the manager is stopped).
func (r *reloader) restartResolvers(eff *static.Configuration) {
	if len(eff.CertificatesResolvers) == 0 {
		r.agg.Remove(acme.Name)
		r.certs.set(nil)
		return
	}
	m, err := acme.New(eff, r.kv, r.log.With("component", "acme"), versionString())
	if err != nil {
		r.log.Error("certificate resolvers skipped", "error", err)
	}
	r.certs.set(m)
	r.agg.Replace(m)
}

// rebuildInternals builds the API (when eff has an api section) and ping
// for eff and returns the internal handlers to serve; metrics are kept.
func (r *reloader) rebuildInternals(eff *static.Configuration) (map[string]http.Handler, *dashboard.API, error) {
	handlers := maps.Clone(r.in.handlers)
	delete(handlers, "api@internal")
	delete(handlers, "dashboard@internal")
	delete(handlers, "ping@internal")
	var api *dashboard.API
	if eff.API != nil {
		var err error
		if r.in.startLive(r.src) {
			// The first api section: the dataplane counts for it from the
			// generation ReloadStatic builds next.
			r.inst.ObserveAlso(r.in.live)
		}
		if api, err = newAPI(eff, r.log, r.src, r.in.sampler); err != nil {
			return nil, nil, err
		}
		handlers["api@internal"] = api.Handler()
		handlers["dashboard@internal"] = api.Handler()
	}
	if eff.Ping != nil {
		if r.in.ping == nil {
			r.in.ping = &pingHandler{}
		}
		handlers["ping@internal"] = r.in.ping
	}
	return handlers, api, nil
}

// publishInternal replaces the internal provider by one for c, with the
// problems of the static configuration: each refused change, and invalid
// (why the file read last does not load) when not nil.
func (r *reloader) publishInternal(c *static.Configuration, refused []static.Refusal, invalid error) {
	src := "static configuration"
	if r.file != "" {
		src += " " + r.file
	}
	var probs []providers.Problem
	if invalid != nil {
		probs = append(probs, providers.Problem{Provider: builtin.Name, Source: src,
			Message:  "reload refused, the running static configuration is kept: " + invalid.Error(),
			Severity: providers.SeverityError})
	}
	for _, f := range refused {
		probs = append(probs, providers.Problem{Provider: builtin.Name, Source: src + " " + f.Path,
			Message:  fmt.Sprintf("%s %s not applied live (%s); the running value is kept", f.Path, f.Kind, f.Reason),
			Severity: providers.SeverityWarning})
	}
	r.agg.Replace(builtin.New(c, probs...))
}

func paths(cs []static.Change) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Path+" "+c.Kind)
	}
	return out
}

func refusedPaths(rs []static.Refusal) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Path+" "+r.Kind)
	}
	return out
}

// reloadOptions is what serve needs to reload the static configuration:
// how to read it again (the same file, environment and flags), the file to
// watch ("" when none) and the logger's level.
type reloadOptions struct {
	load  func() (*loaded, error)
	file  string
	level *slog.LevelVar
	flush *flushBudget // the shutdown's telemetry flush budget (shared with the logger's)
}
