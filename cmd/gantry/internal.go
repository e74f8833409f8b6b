package main

import (
	"context"
	"crypto/x509"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dashboard"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/middleware"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/web"
)

// internals are the handlers of Gantry's own services ("…@internal"), and
// the observers behind them.
type internals struct {
	handlers map[string]http.Handler
	api      *dashboard.API // nil unless the api section is set
	// live and sampler are the dashboard's per-router rates and chart
	// history: made with the first api section (at start or by a reload),
	// then kept for the process's life and handed to each API built, so a
	// rebuilt API keeps the charts' history (startLive).
	live     *observe.Live
	sampler  *dashboard.Sampler
	stop     chan struct{} // closed by close: ends the sampler
	stopOnce sync.Once
	wg       sync.WaitGroup
	metrics  *observe.Metrics     // nil unless metrics.prometheus is set
	flush    *flushBudget         // the shutdown's telemetry flush budget (run sets it); nil: 5 s of its own
	otlp     *observe.OTLPMetrics // nil unless metrics.otlp is set
	log      *slog.Logger
	ping     *pingHandler // nil unless ping is set
}

// internalSources are what the API reads; any may be nil except active.
type internalSources struct {
	active  *router.Active
	pool    *generation.Pool
	sources dashboard.Sources
	history dashboard.History
	// certificates is the ACME manager, nil without certificatesResolvers.
	certificates dashboard.Certificates
	// cluster is the Consul registration, nil without cluster.consul.
	cluster dashboard.Cluster
	// reloads reports the static configuration's reloads (/api/static).
	reloads func() static.ReloadStatus
	// started is when this process started (/api/version).
	started time.Time
	// dynamic returns the dynamic entrypoints open (/api/entrypoints);
	// nil: none.
	dynamic func() map[string]*static.EntryPoint
	// migration holds the running providers.kubernetesIngressNGINX.
	migration *migrationHolder
}

// newInternals builds the internal services the static configuration
// enables: api@internal and dashboard@internal (the API and its UI) when
// the api section is set, prometheus@internal with metrics.prometheus,
// ping@internal with ping. It returns an error naming the option when the
// API's security settings are invalid.
func newInternals(c *static.Configuration, log *slog.Logger, src internalSources) (_ *internals, err error) {
	in := &internals{handlers: map[string]http.Handler{}, log: log, stop: make(chan struct{})}
	defer func() {
		if err != nil {
			in.close()
		}
	}()
	if c.API != nil {
		in.startLive(src)
		api, err := newAPI(c, log, src, in.sampler)
		if err != nil {
			return nil, err
		}
		in.api = api
		in.handlers["api@internal"] = api.Handler()
		in.handlers["dashboard@internal"] = api.Handler()
	}
	var certificates func() []*x509.Certificate
	if active := src.active; active != nil {
		certificates = func() []*x509.Certificate {
			if m := active.Load().Merged(); m != nil && m.Config != nil {
				return observe.TLSCertificates(m.Config.TLS)
			}
			return nil
		}
	}
	var servers func() []observe.ServerUp
	if pool := src.pool; pool != nil {
		servers = func() []observe.ServerUp {
			var out []observe.ServerUp
			for _, b := range pool.Status() {
				for _, svc := range b.Services {
					out = append(out, observe.ServerUp{Service: svc, URL: b.URL, Up: b.Up})
				}
			}
			return out
		}
	}
	if c.Metrics != nil && c.Metrics.Prometheus != nil {
		if err := observe.CheckPrometheus(c.Metrics.Prometheus); err != nil {
			return nil, err
		}
		in.metrics = observe.NewMetrics(observe.MetricsOptions{Prometheus: c.Metrics.Prometheus, AddInternals: c.Metrics.AddInternals,
			Runtime: true, Certificates: certificates, Servers: servers})
		in.handlers["prometheus@internal"] = in.metrics.Handler()
	}
	if c.Metrics != nil && c.Metrics.OTLP != nil {
		// The exporter connects lazily: nothing here waits on the collector.
		m, err := observe.NewOTLPMetrics(context.Background(), observe.OTLPMetricsOptions{Config: c.Metrics.OTLP,
			AddInternals: c.Metrics.AddInternals, Certificates: certificates, Servers: servers, Version: versionString()})
		if err != nil {
			return nil, err
		}
		in.otlp = m
	}
	if c.Ping != nil {
		in.ping = &pingHandler{}
		in.handlers["ping@internal"] = in.ping
	}
	return in, nil
}

// startLive makes the live rates and their sampler, once, and runs the
// sampler until close; it reports whether it made them (then live must be
// added to the dataplane's observers).
func (in *internals) startLive(src internalSources) bool {
	if in.sampler != nil {
		return false
	}
	in.live = observe.NewLive()
	in.sampler = dashboard.NewSampler(in.live, 0, nil)
	tables := dashboard.RouterTables(src.active)
	in.wg.Go(func() { in.sampler.Run(in.stop, tables) })
	return true
}

// newAPI builds api@internal for c's api section (which must be set),
// reading src and its charts from sampler.
func newAPI(c *static.Configuration, log *slog.Logger, src internalSources, sampler *dashboard.Sampler) (*dashboard.API, error) {
	opts := dashboard.Options{
		Log:       log.With("component", "api"),
		Static:    c,
		Tables:    dashboard.RouterTables(src.active),
		Sampler:   sampler,
		Version:   versionString(),
		StartDate: src.started,
	}
	if src.pool != nil {
		opts.Health = dashboard.PoolHealth(src.pool)
	}
	if src.sources != nil {
		opts.Sources = src.sources
	}
	if src.history != nil {
		opts.History = src.history
	}
	if src.cluster != nil {
		opts.Cluster = src.cluster
	}
	if src.certificates != nil {
		opts.Certificates = src.certificates
	}
	if src.reloads != nil {
		opts.StaticReloads = src.reloads
	}
	opts.DynamicEntryPoints = src.dynamic
	if src.migration != nil && c.Providers != nil && c.Providers.KubernetesIngressNGINX != nil {
		opts.Migration = src.migration.report
	}
	opts.Backends = func() map[string]providers.SourceState {
		b := middleware.Backends()
		if reg, ok := src.cluster.(interface{ State() providers.SourceState }); ok {
			b["cluster registration"] = reg.State()
		}
		return b
	}
	if c.API.Dashboard == nil || *c.API.Dashboard {
		opts.UI = web.FS()
	}
	return dashboard.New(opts)
}

// observers returns the internal observers to feed from the dataplane.
func (in *internals) observers() []observe.Observer {
	var out []observe.Observer
	if in.live != nil {
		out = append(out, in.live)
	}
	if in.metrics != nil {
		out = append(out, in.metrics)
	}
	if in.otlp != nil {
		out = append(out, in.otlp)
	}
	return out
}

// reloaded records a configuration applied at at in the metrics.
func (in *internals) reloaded(at time.Time) {
	if in.metrics != nil {
		in.metrics.ConfigReloaded(at)
	}
	if in.otlp != nil {
		in.otlp.ConfigReloaded(at)
	}
}

// closeAPI ends the API's WebSocket loops and the sampler (they would
// otherwise hold the grace period). Idempotent.
func (in *internals) closeAPI() {
	if in.api != nil {
		in.api.Close()
	}
	if in.stop != nil {
		in.stopOnce.Do(func() { close(in.stop) })
		in.wg.Wait()
	}
}

// close is closeAPI, then the push of the OTLP metrics left (bounded by
// flush when set, else 5 s). At shutdown it runs once the entrypoints
// have drained, so the requests served while draining are in that last
// push.
func (in *internals) close() { in.closeWithin(5 * time.Second) }

// closeWithin is close, pushing the OTLP metrics left for at most d (0:
// none are pushed: gantry validate).
func (in *internals) closeWithin(d time.Duration) {
	in.closeAPI()
	if in.otlp != nil {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		if in.flush != nil && d > 0 {
			ctx = in.flush.context() // the shutdown's budget, shared with the other exporters
		}
		if err := in.otlp.Shutdown(ctx); err != nil && d > 0 {
			in.log.Warn("metrics.otlp: push at shutdown", "error", err)
		}
	}
}

// pingHandler is ping@internal: GET or HEAD answer 200 "OK" while serving
// and 503 "Service Unavailable" once shutdown has begun, so load balancers
// in front stop sending traffic (Traefik's terminatingStatusCode,
// https://doc.traefik.io/traefik/operations/ping/). Other methods get 405.
type pingHandler struct{ terminating atomic.Bool }

func (p *pingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if p.terminating.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(http.StatusText(http.StatusServiceUnavailable)))
		return
	}
	_, _ = w.Write([]byte("OK"))
}
