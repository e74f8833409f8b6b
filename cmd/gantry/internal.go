package main

import (
	"net/http"
	"sync/atomic"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/observe"
)

// internals are the handlers of Gantry's own services ("…@internal"), and
// the observers behind them.
type internals struct {
	handlers map[string]http.Handler
	metrics  *observe.Metrics // nil unless metrics.prometheus is set
	ping     *pingHandler     // nil unless ping is set
}

// newInternals builds the internal services the static configuration
// enables. pool (may be nil) feeds traefik_service_server_up.
func newInternals(c *static.Configuration, pool *dataplane.Pool) *internals {
	in := &internals{handlers: map[string]http.Handler{}}
	if c.Metrics != nil && c.Metrics.Prometheus != nil {
		opts := observe.MetricsOptions{Prometheus: c.Metrics.Prometheus, Runtime: true}
		if pool != nil {
			opts.Servers = func() []observe.ServerUp {
				var out []observe.ServerUp
				for _, b := range pool.Status() {
					for _, svc := range b.Services {
						out = append(out, observe.ServerUp{Service: svc, URL: b.URL, Up: b.Up})
					}
				}
				return out
			}
		}
		in.metrics = observe.NewMetrics(opts)
		in.handlers["prometheus@internal"] = in.metrics.Handler()
	}
	if c.Ping != nil {
		in.ping = &pingHandler{}
		in.handlers["ping@internal"] = in.ping
	}
	return in
}

// internalHandlers returns just the handler map of newInternals.
func internalHandlers(c *static.Configuration, pool *dataplane.Pool) map[string]http.Handler {
	return newInternals(c, pool).handlers
}

// pingHandler is ping@internal: 200 "OK" while serving, 503 "Service
// Unavailable" once shutdown has begun, so load balancers in front stop
// sending traffic (Traefik's terminatingStatusCode,
// https://doc.traefik.io/traefik/operations/ping/).
type pingHandler struct{ terminating atomic.Bool }

func (p *pingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if p.terminating.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(http.StatusText(http.StatusServiceUnavailable)))
		return
	}
	_, _ = w.Write([]byte("OK"))
}
