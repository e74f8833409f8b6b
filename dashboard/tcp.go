package dashboard

import (
	"net/http"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/routestats"
)

// The TCP and UDP endpoints, in Traefik's shapes (pkg/api/handler_tcp.go,
// handler_udp.go): each object's configuration with status, error and
// usedBy/using, plus name, provider and (services, middlewares) type.
// Gantry adds "stats" to routers and services (routestats.Stats): open and
// total connections (UDP: sessions), bytes and (UDP) datagrams each way; a
// service's are the sum of the routers that name it.

// streamStats is implemented by Tables that have the TCP/UDP routers' live
// counters (RouterTables).
type streamStats interface {
	StreamStats() *routestats.Registry
}

// routerStats returns router name's counters (zero when it has had no
// connection yet), or nil without counters.
func (v *view) routerStats(name string) *routestats.Stats {
	if v.stats == nil {
		return nil
	}
	st, _ := v.stats.Get(name)
	return &st
}

// serviceStats returns the sum of the counters of the routers whose
// service is name, from sums (built once per view from routers), or nil
// without counters.
func serviceStats[R any](v *view, sums *map[string]routestats.Stats, routers map[string]*R, service func(*R) string, name string) *routestats.Stats {
	if v.stats == nil {
		return nil
	}
	if *sums == nil {
		*sums = map[string]routestats.Stats{}
		for rn, r := range routers {
			if r == nil {
				continue
			}
			if st, ok := v.stats.Get(rn); ok {
				sum := (*sums)[service(r)]
				sum.Add(st)
				(*sums)[service(r)] = sum
			}
		}
	}
	st := (*sums)[name]
	return &st
}

func (a *API) tcpRoutes(get func(string, http.HandlerFunc)) {
	get("/api/tcp/routers", a.getTCPRouters)
	get("/api/tcp/routers/{name}", func(w http.ResponseWriter, r *http.Request) { getOne(w, r, "tcp router", a.view().tcpRouter) })
	get("/api/tcp/services", a.getTCPServices)
	get("/api/tcp/services/{name}", func(w http.ResponseWriter, r *http.Request) { getOne(w, r, "tcp service", a.view().tcpService) })
	get("/api/tcp/middlewares", a.getTCPMiddlewares)
	get("/api/tcp/middlewares/{name}", func(w http.ResponseWriter, r *http.Request) {
		getOne(w, r, "tcp middleware", a.view().tcpMiddleware)
	})
	get("/api/udp/routers", a.getUDPRouters)
	get("/api/udp/routers/{name}", func(w http.ResponseWriter, r *http.Request) { getOne(w, r, "udp router", a.view().udpRouter) })
	get("/api/udp/services", a.getUDPServices)
	get("/api/udp/services/{name}", func(w http.ResponseWriter, r *http.Request) { getOne(w, r, "udp service", a.view().udpService) })
}

func (v *view) tcp() *config.TCPConfiguration {
	if v.merged == nil || v.merged.Config == nil || v.merged.Config.TCP == nil {
		return &config.TCPConfiguration{}
	}
	return v.merged.Config.TCP
}

func (v *view) udp() *config.UDPConfiguration {
	if v.merged == nil || v.merged.Config == nil || v.merged.Config.UDP == nil {
		return &config.UDPConfiguration{}
	}
	return v.merged.Config.UDP
}

// routerStatus and objectStatus read the report; an object missing from it
// is shown enabled (the report of an older table).
func routerStatus(m map[string]*router.RouterStatus, name string) (string, []string, []string) {
	if st := m[name]; st != nil {
		return st.Status, st.Errors, st.Using
	}
	return StatusEnabled, nil, nil
}

func objectStatus(m map[string]*router.ObjectStatus, name string) (string, []string, []string) {
	if st := m[name]; st != nil {
		return st.Status, st.Errors, st.UsedBy
	}
	return StatusEnabled, nil, nil
}

// streamRouter is the item of TCP or UDP router name of routers (eps its
// entrypoints): its status in m, the default entrypoints it is on written
// in (Traefik writes them in), its counters; false when routers has none.
func streamRouter[C any](v *view, routers map[string]*C, eps func(*C) *[]string, m map[string]*router.RouterStatus, name string, withName bool) (item[C], bool) {
	rc := routers[name]
	if rc == nil {
		return item[C]{}, false
	}
	it := item[C]{Conf: rc}
	it.Stats = v.routerStats(name)
	it.Status, it.Err, it.Using = routerStatus(m, name)
	if len(*eps(rc)) == 0 {
		cp := *rc
		*eps(&cp) = it.Using
		it.Conf = &cp
	}
	if withName {
		it.Name, it.Provider = name, providers.ProviderOf(name)
	}
	return it, true
}

// streamService is the item of TCP or UDP service name of services: its
// status in m, type (loadbalancer or weighted) and the sum of the counters
// of the routers that name it (serviceStats over routers, summed once into
// sums); false when services has none.
func streamService[C, R any](v *view, services map[string]*C, weighted func(*C) bool, sums *map[string]routestats.Stats, routers map[string]*R, service func(*R) string, m map[string]*router.ObjectStatus, name string, withName bool) (item[C], bool) {
	sc := services[name]
	if sc == nil {
		return item[C]{}, false
	}
	it := item[C]{Conf: sc}
	it.Stats = serviceStats(v, sums, routers, service, name)
	it.Status, it.Err, it.UsedBy = objectStatus(m, name)
	if withName {
		it.Name, it.Provider, it.Type = name, providers.ProviderOf(name), "loadbalancer"
		if weighted(sc) {
			it.Type = "weighted"
		}
	}
	return it, true
}

func (v *view) tcpRouter(name string, withName bool) (tcpRouterItem, bool) {
	eps := func(r *config.TCPRouter) *[]string { return &r.EntryPoints }
	return streamRouter(v, v.tcp().Routers, eps, v.status.TCPRouters, name, withName)
}

func (v *view) udpRouter(name string, withName bool) (udpRouterItem, bool) {
	eps := func(r *config.UDPRouter) *[]string { return &r.EntryPoints }
	return streamRouter(v, v.udp().Routers, eps, v.status.UDPRouters, name, withName)
}

func (v *view) tcpService(name string, withName bool) (tcpServiceItem, bool) {
	tcp := v.tcp()
	return streamService(v, tcp.Services, func(s *config.TCPService) bool { return s.Weighted != nil },
		&v.tcpServiceStats, tcp.Routers, func(r *config.TCPRouter) string { return r.Service }, v.status.TCPServices, name, withName)
}

func (v *view) udpService(name string, withName bool) (udpServiceItem, bool) {
	udp := v.udp()
	return streamService(v, udp.Services, func(s *config.UDPService) bool { return s.Weighted != nil },
		&v.udpServiceStats, udp.Routers, func(r *config.UDPRouter) string { return r.Service }, v.status.UDPServices, name, withName)
}

func (v *view) tcpMiddleware(name string, withName bool) (tcpMiddlewareItem, bool) {
	mc, ok := v.tcp().Middlewares[name]
	if !ok || mc == nil {
		return tcpMiddlewareItem{}, false
	}
	it := tcpMiddlewareItem{Conf: mc}
	it.Status, it.Err, it.UsedBy = objectStatus(v.status.TCPMiddlewares, name)
	if withName {
		it.Name, it.Provider = name, providers.ProviderOf(name)
		switch {
		case mc.InFlightConn != nil:
			it.Type = "inflightconn"
		case mc.IPAllowList != nil:
			it.Type = "ipallowlist"
		case mc.IPWhiteList != nil:
			it.Type = "ipwhitelist"
		}
	}
	return it, true
}

// statused is an item of the lists: its status in the report.
type statused interface{ status() string }

// list collects the items of names that c keeps (search in the name and
// the extra fields given by text), in name order.
func list[T statused](names []string, c criterion, get func(string, bool) (T, bool), text func(T) []string) []T {
	out := []T{}
	for _, n := range names {
		it, ok := get(n, true)
		if ok && c.keep(n, it.status(), text(it)...) {
			out = append(out, it)
		}
	}
	return out
}

func (a *API) getTCPRouters(w http.ResponseWriter, r *http.Request) {
	v := a.view()
	listResponse(w, r, list(sortedNames(v.tcp().Routers), newCriterion(r), v.tcpRouter,
		func(it tcpRouterItem) []string { return []string{strings.ToLower(it.Conf.Rule), it.Conf.Service} }))
}

func (a *API) getTCPServices(w http.ResponseWriter, r *http.Request) {
	v := a.view()
	listResponse(w, r, list(sortedNames(v.tcp().Services), newCriterion(r), v.tcpService,
		func(tcpServiceItem) []string { return nil }))
}

func (a *API) getTCPMiddlewares(w http.ResponseWriter, r *http.Request) {
	v := a.view()
	listResponse(w, r, list(sortedNames(v.tcp().Middlewares), newCriterion(r), v.tcpMiddleware,
		func(tcpMiddlewareItem) []string { return nil }))
}

func (a *API) getUDPRouters(w http.ResponseWriter, r *http.Request) {
	v := a.view()
	listResponse(w, r, list(sortedNames(v.udp().Routers), newCriterion(r), v.udpRouter,
		func(it udpRouterItem) []string { return []string{it.Conf.Service} }))
}

func (a *API) getUDPServices(w http.ResponseWriter, r *http.Request) {
	v := a.view()
	listResponse(w, r, list(sortedNames(v.udp().Services), newCriterion(r), v.udpService,
		func(udpServiceItem) []string { return nil }))
}

func (v *view) tcpOverview() schemeOverview {
	return schemeOverview{
		Routers:     count(statuses(sortedNames(v.tcp().Routers), v.tcpRouter)),
		Services:    count(statuses(sortedNames(v.tcp().Services), v.tcpService)),
		Middlewares: count(statuses(sortedNames(v.tcp().Middlewares), v.tcpMiddleware)),
	}
}

func (v *view) udpOverview() schemeOverview {
	return schemeOverview{
		Routers:  count(statuses(sortedNames(v.udp().Routers), v.udpRouter)),
		Services: count(statuses(sortedNames(v.udp().Services), v.udpService)),
	}
}

// statuses returns the status of each item of names that get finds, in
// the order of names (what count sums up).
func statuses[T statused](names []string, get func(string, bool) (T, bool)) []string {
	var out []string
	for _, n := range names {
		if it, ok := get(n, false); ok {
			out = append(out, it.status())
		}
	}
	return out
}
