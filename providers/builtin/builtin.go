package builtin

import (
	"context"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// Name is the provider's name; its objects are qualified "x@internal".
const Name = "internal"

// DefaultEntryPoint is the entrypoint of the internal routers when the
// static configuration names none (Traefik's "traefik", default :8080).
const DefaultEntryPoint = "traefik"

// Router priorities: the API and the metrics/ping endpoints take the top of
// the user range (config.MaxPriority); the dashboard one less.
const (
	PriorityAPI     = config.MaxPriority
	PriorityMetrics = config.MaxPriority - 1
	PriorityPing    = config.MaxPriority - 2
)

// Provider publishes the internal routers of one static configuration.
type Provider struct {
	snap providers.Snapshot
}

var _ providers.Provider = (*Provider)(nil)

// New returns the internal provider for c (nil c means no internal
// routers). problems are published with the routers: those of the static
// configuration itself (a reload refused or applied in part, see
// cmd/gantry), shown in /api/problems like any provider's.
func New(c *static.Configuration, problems ...providers.Problem) *Provider {
	return &Provider{snap: providers.Snapshot{Config: Build(c), Problems: problems}}
}

// Name returns "internal".
func (p *Provider) Name() string { return Name }

// Run publishes the internal routers once, then blocks until ctx is done
// and returns nil.
func (p *Provider) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	publish(p.snap)
	<-ctx.Done()
	return nil
}

// Build returns the configuration holding the internal routers for c, with
// names unqualified (the aggregator qualifies them "@internal"). It never
// returns nil.
func Build(c *static.Configuration) *config.Configuration {
	out := config.New()
	if c == nil {
		return out
	}
	add := func(name, ep, rule, service string, prio int) {
		if ep == "" {
			ep = DefaultEntryPoint
		}
		out.HTTP.Routers[name] = &config.Router{
			RouterCommon: config.RouterCommon{
				EntryPoints: []string{ep},
				Rule:        rule,
				Service:     service,
				Priority:    prio,
			},
		}
	}
	if c.API != nil && c.API.Insecure {
		// Under api.basePath (Traefik v3.4) every path is prefixed by it; the
		// API handler strips it again.
		bp := strings.TrimRight(c.API.BasePath, "/")
		rule := "PathPrefix(`" + bp + "/api`) || PathPrefix(`" + bp + "/dashboard`)"
		if c.API.Debug {
			rule += " || PathPrefix(`" + bp + "/debug`)" // api.debug: pprof and expvar
		}
		add("api", DefaultEntryPoint, rule, "api@internal", PriorityAPI)
	}
	if m := c.Metrics; m != nil && m.Prometheus != nil && !m.Prometheus.ManualRouting {
		add("prometheus", m.Prometheus.EntryPoint, "PathPrefix(`/metrics`)", "prometheus@internal", PriorityMetrics)
	}
	if c.Ping != nil {
		add("ping", c.Ping.EntryPoint, "PathPrefix(`/ping`)", "ping@internal", PriorityPing)
	}
	return out
}
