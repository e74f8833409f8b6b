package dashboard

import (
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/routestats"
)

// Traefik's object statuses (pkg/config/runtime).
const (
	StatusEnabled  = router.StatusEnabled
	StatusWarning  = router.StatusWarning
	StatusDisabled = router.StatusDisabled
)

// view is everything one response is computed from: one table and one
// health reading, taken once per request.
type view struct {
	tbl     Table
	merged  *providers.Merged
	status  *router.Report
	servers []Server
	// byOrigin indexes servers by origin (server), built on first use.
	byOrigin map[string][]int
	stats    *routestats.Registry // TCP/UDP routers' live counters; nil without them (tcp.go)
	// tcpServiceStats and udpServiceStats are the services' sums, built
	// on first use (tcp.go serviceStats).
	tcpServiceStats, udpServiceStats map[string]routestats.Stats
	httpView                         *config.HTTPConfiguration // http(), built once
}

func (a *API) view() *view { return a.viewOf(a.tables.Current()) }

func (a *API) viewOf(t Table) *view {
	v := &view{tbl: t, merged: t.Merged(), status: t.Report()}
	if v.status == nil {
		v.status = &router.Report{}
	}
	if v.merged == nil {
		v.merged = &providers.Merged{}
	}
	if a.health != nil {
		v.servers = a.health.Servers()
	}
	if st, ok := a.tables.(streamStats); ok {
		v.stats = st.StreamStats()
	}
	return v
}

// http is the HTTP configuration the API shows: the merged one plus the
// routers and middlewares Gantry adds itself (the entrypoint redirection
// "web-to-websecure@internal" and its middleware, as Traefik lists them).
func (v *view) http() *config.HTTPConfiguration {
	if v.httpView != nil {
		return v.httpView
	}
	h := &config.HTTPConfiguration{}
	if v.merged != nil && v.merged.Config != nil && v.merged.Config.HTTP != nil {
		h = v.merged.Config.HTTP
	}
	if len(v.status.InternalRouters) > 0 || len(v.status.InternalMiddlewares) > 0 {
		cp := *h
		cp.Routers = maps.Clone(h.Routers)
		cp.Middlewares = maps.Clone(h.Middlewares)
		if cp.Routers == nil {
			cp.Routers = map[string]*config.Router{}
		}
		if cp.Middlewares == nil {
			cp.Middlewares = map[string]*config.Middleware{}
		}
		maps.Copy(cp.Routers, v.status.InternalRouters)
		maps.Copy(cp.Middlewares, v.status.InternalMiddlewares)
		h = &cp
	}
	v.httpView = h
	return h
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (v *view) router(name string, withName bool) (routerItem, bool) {
	rc, ok := v.http().Routers[name]
	if !ok {
		return routerItem{}, false
	}
	cp := *rc
	if cp.TLS != nil && cp.TLS.Options == "" { // Traefik shows the default options by name
		tls := *cp.TLS
		tls.Options = "default"
		cp.TLS = &tls
	}
	it := routerItem{Conf: &cp, itemState: itemState{Status: StatusEnabled}}
	if st := v.status.Routers[name]; st != nil {
		it.Status, it.Err, it.Using = st.Status, st.Errors, st.Using
		if len(cp.EntryPoints) == 0 { // the defaults it is on (Traefik writes them in)
			cp.EntryPoints = st.Using
		}
	}
	if withName {
		it.Name, it.Provider = name, providers.ProviderOf(name)
	}
	return it, true
}

// priority is a router's effective priority (configured, else len(rule)).
func (v *view) priority(name string) int {
	if st := v.status.Routers[name]; st != nil {
		return st.Priority
	}
	return 0
}

// serviceNames lists every service: the configured ones and the internal
// ones (api@internal, prometheus@internal, …) that routers use, as
// Traefik's API lists them.
func (v *view) serviceNames() []string {
	names := sortedNames(v.http().Services)
	internal := v.internalServices()
	for n := range internal {
		if _, dup := v.http().Services[n]; !dup {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// internalServices maps each "…@internal" service routers point at to the
// routers using it, sorted.
func (v *view) internalServices() map[string][]string {
	out := map[string][]string{}
	for _, rn := range sortedNames(v.http().Routers) {
		if r := v.http().Routers[rn]; r != nil && providers.ProviderOf(r.Service) == InternalProvider {
			out[r.Service] = append(out[r.Service], rn)
		}
	}
	return out
}

func (v *view) service(name string, withName bool) (serviceItem, bool) {
	sc, ok := v.http().Services[name]
	if !ok {
		usedBy, internal := v.internalServices()[name]
		if !internal {
			return serviceItem{}, false
		}
		it := serviceItem{itemState: itemState{Status: StatusEnabled, UsedBy: usedBy}}
		if withName {
			it.Name, it.Provider = name, InternalProvider
		}
		return it, true
	}
	it := serviceItem{Conf: sc, itemState: itemState{Status: StatusEnabled}}
	if st := v.status.Services[name]; st != nil {
		it.Status, it.Err, it.UsedBy = st.Status, st.Errors, st.UsedBy
	}
	if sc.LoadBalancer != nil && it.Status != StatusDisabled {
		it.ServerStatus = map[string]string{}
		for _, s := range sc.LoadBalancer.Servers {
			state := "UP"
			if srv, found := v.server(name, s.URL); found {
				if !srv.Up {
					state = "DOWN"
				}
				it.ServerDetails = append(it.ServerDetails, srv)
			}
			it.ServerStatus[s.URL] = state
		}
	}
	if withName {
		it.Name, it.Provider, it.Type = name, providers.ProviderOf(name), serviceType(sc)
	}
	return it, true
}

// maxSharedServices bounds the services one server names (Server.Services:
// every service sharing that server): a server shared by thousands of
// services would otherwise repeat them all in each of those services'
// serverDetails, a response quadratic in the configuration's size.
const maxSharedServices = 10

// ServerDetail is one server of a service's serverDetails: the pool's
// view of it with Services cut to maxSharedServices (the service asked
// about first), and ServicesTotal, how many services share it, when cut.
type ServerDetail struct {
	Server
	ServicesTotal int `json:"servicesTotal,omitempty"`
}

// server finds the pool's view of rawURL as used by service, matching by
// origin (scheme://host:port) since the pool keys servers that way. The
// servers are indexed by origin on first use (one pass per view, not one
// per service's server).
func (v *view) server(service, rawURL string) (ServerDetail, bool) {
	if v.byOrigin == nil {
		v.byOrigin = make(map[string][]int, len(v.servers))
		for i := range v.servers {
			o := origin(v.servers[i].URL)
			v.byOrigin[o] = append(v.byOrigin[o], i)
		}
	}
	idx := v.byOrigin[origin(rawURL)]
	if len(idx) == 0 {
		return ServerDetail{}, false
	}
	found := v.servers[idx[0]]
	for _, i := range idx {
		if slices.Contains(v.servers[i].Services, service) {
			found = v.servers[i]
			break
		}
	}
	d := ServerDetail{Server: found}
	if len(found.Services) > maxSharedServices {
		d.Services, d.ServicesTotal = sharedCut(found.Services, service), len(found.Services)
	}
	return d, true
}

// sharedCut returns at most maxSharedServices of services, first (the
// one asking) first when services has it; services is not modified.
func sharedCut(services []string, first string) []string {
	if len(services) <= maxSharedServices {
		return services
	}
	out := make([]string, 0, maxSharedServices)
	if slices.Contains(services, first) {
		out = append(out, first)
	}
	for _, n := range services {
		if len(out) == maxSharedServices {
			break
		}
		if n != first {
			out = append(out, n)
		}
	}
	return out
}

func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	host := strings.ToLower(u.Host)
	if u.Port() == "" {
		switch u.Scheme {
		case "http", "ws", "h2c":
			host += ":80"
		case "https", "wss":
			host += ":443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + host
}

func serviceType(s *config.Service) string {
	switch {
	case s.LoadBalancer != nil:
		return "loadbalancer"
	case s.HighestRandomWeight != nil:
		return "highestrandomweight"
	case s.Weighted != nil:
		return "weighted"
	case s.Mirroring != nil:
		return "mirroring"
	case s.Failover != nil:
		return "failover"
	}
	return ""
}

func (v *view) middleware(name string, withName bool) (middlewareItem, bool) {
	mc, ok := v.http().Middlewares[name]
	if !ok {
		return middlewareItem{}, false
	}
	it := middlewareItem{Conf: mc, itemState: itemState{Status: StatusEnabled}}
	if st := v.status.Middlewares[name]; st != nil {
		it.Status, it.Err, it.UsedBy = st.Status, st.Errors, st.UsedBy
	}
	if withName {
		it.Name, it.Provider = name, providers.ProviderOf(name)
		if kinds := config.MiddlewareKinds(mc); len(kinds) > 0 {
			it.Type = strings.ToLower(kinds[0])
		}
	}
	return it, true
}

// section is Traefik's overview counter: total, warnings, errors (disabled).
type section struct {
	Total    int `json:"total"`
	Warnings int `json:"warnings"`
	Errors   int `json:"errors"`
}

func count(statuses []string) *section {
	s := &section{Total: len(statuses)}
	for _, st := range statuses {
		switch st {
		case StatusDisabled:
			s.Errors++
		case StatusWarning:
			s.Warnings++
		}
	}
	return s
}

type schemeOverview struct {
	Routers     *section `json:"routers,omitempty"`
	Services    *section `json:"services,omitempty"`
	Middlewares *section `json:"middlewares,omitempty"`
}

type features struct {
	Tracing   string `json:"tracing"`
	Metrics   string `json:"metrics"`
	AccessLog bool   `json:"accessLog"`
	Hub       bool   `json:"hub"`
}

type overview struct {
	HTTP      schemeOverview `json:"http"`
	TCP       schemeOverview `json:"tcp"`
	UDP       schemeOverview `json:"udp"`
	Features  features       `json:"features"`
	Providers []string       `json:"providers,omitempty"`
	// Gantry's additions.
	Version string `json:"version,omitempty"`
	// ConfigVersion is the hash of the configuration served alone, as
	// the cluster registration publishes it (configVersion in
	// /api/cluster): the version instances compare. Version also hashes
	// the problems and where objects come from.
	ConfigVersion string `json:"configVersion,omitempty"`
	Problems      int    `json:"problems"`
	Servers       *struct {
		Total int `json:"total"`
		Down  int `json:"down"`
	} `json:"servers,omitempty"`
}

func (a *API) overview(v *view) overview {
	h := v.http()
	var rs, ss, ms []string
	for _, n := range sortedNames(h.Routers) {
		it, _ := v.router(n, false)
		rs = append(rs, it.Status)
	}
	for _, n := range v.serviceNames() {
		it, _ := v.service(n, false)
		ss = append(ss, it.Status)
	}
	for _, n := range sortedNames(h.Middlewares) {
		it, _ := v.middleware(n, false)
		ms = append(ms, it.Status)
	}
	o := overview{
		HTTP:          schemeOverview{Routers: count(rs), Services: count(ss), Middlewares: count(ms)},
		TCP:           v.tcpOverview(),
		UDP:           v.udpOverview(),
		Features:      a.features(),
		Providers:     a.providerNames(),
		Version:       v.tbl.Version(),
		ConfigVersion: a.contentVersion(v),
		Problems:      len(a.problems(v)),
	}
	if a.health != nil {
		o.Servers = &struct {
			Total int `json:"total"`
			Down  int `json:"down"`
		}{Total: len(v.servers)}
		for _, s := range v.servers {
			if !s.Up {
				o.Servers.Down++
			}
		}
	}
	return o
}

func (a *API) features() features {
	var f features
	st := a.opts.Static
	if st == nil {
		return f
	}
	if st.Metrics != nil && st.Metrics.Prometheus != nil {
		f.Metrics = "Prometheus"
	}
	f.AccessLog = st.AccessLog != nil
	if st.Tracing != nil {
		f.Tracing = "OpenTelemetry" // Traefik's overview names the backend
	}
	return f
}

// providerNames lists configured providers as Traefik does (Go field names
// of the static providers section).
func (a *API) providerNames() []string {
	st := a.opts.Static
	if st == nil || st.Providers == nil {
		return nil
	}
	p := st.Providers
	var out []string
	for _, c := range []struct {
		set  bool
		name string
	}{
		{p.File != nil, "File"}, {p.Docker != nil, "Docker"}, {p.ConsulCatalog != nil, "ConsulCatalog"},
		{p.Consul != nil, "Consul"}, {p.KubernetesGateway != nil, "KubernetesGateway"},
	} {
		if c.set {
			out = append(out, c.name)
		}
	}
	return out
}
