package docker

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// merge combines the containers' pieces by object name, in the order of
// their sort keys (Traefik's provider.Merge): same-named load-balancer
// services with identical settings are merged and their servers unioned by
// URL — this is how scaled replicas share one service; any other object
// defined differently by two containers is left out, with a problem naming
// the containers. Dynamic entrypoints merge the same way (one container's
// request, or several asking for the same address); origins locates each
// entrypoint kept ("entrypoint redis" → its container and label).
func (b *builder) merge(pieces []piece) (*config.Configuration, map[string]string) {
	slices.SortFunc(pieces, func(x, y piece) int { return cmp.Compare(x.sortKey, y.sortKey) })
	out := config.New()
	out.TLS = nil
	svcs := newTable[*config.Service]("service")
	rts := newTable[*config.Router]("router")
	mws := newTable[*config.Middleware]("middleware")
	sts := newTable[*config.ServersTransport]("serversTransport")
	stores := newTable[*config.TLSStore]("tls store")
	eps := newTable[*config.DynamicEntryPoint]("entrypoint")
	var origins map[string]string
	for _, p := range pieces {
		for _, n := range slices.Sorted(maps.Keys(p.entryPoints)) {
			eps.add(n, p.container, p.entryPoints[n], nil)
			if origins == nil {
				origins = map[string]string{}
			}
			if _, ok := origins["entrypoint "+n]; !ok {
				origins["entrypoint "+n] = p.epOrigins[n]
			}
		}
		for _, n := range slices.Sorted(maps.Keys(p.http.Services)) {
			svcs.add(n, p.container, p.http.Services[n], mergeService)
		}
		for _, n := range slices.Sorted(maps.Keys(p.http.Routers)) {
			rts.add(n, p.container, p.http.Routers[n], nil)
		}
		for _, n := range slices.Sorted(maps.Keys(p.http.Middlewares)) {
			mws.add(n, p.container, p.http.Middlewares[n], nil)
		}
		for _, n := range slices.Sorted(maps.Keys(p.http.ServersTransports)) {
			sts.add(n, p.container, p.http.ServersTransports[n], nil)
		}
		for _, n := range slices.Sorted(maps.Keys(p.stores)) {
			stores.add(n, p.container, p.stores[n], nil)
		}
	}
	out.HTTP.Services = svcs.result(b)
	out.HTTP.Routers = rts.result(b)
	out.HTTP.Middlewares = mws.result(b)
	out.HTTP.ServersTransports = sts.result(b)
	b.mergeTCPUDP(out, pieces)
	if st := stores.result(b); len(st) > 0 {
		out.TLS = &config.TLSConfiguration{Stores: st}
	}
	if e := eps.result(b); len(e) > 0 {
		out.EntryPoints = e
	}
	for k := range origins {
		if out.EntryPoints[strings.TrimPrefix(k, "entrypoint ")] == nil {
			delete(origins, k)
		}
	}
	if len(origins) == 0 {
		origins = nil
	}
	return out, origins
}

// table merges one kind of object across containers.
type table[T any] struct {
	kind     string
	objs     map[string]T
	from     map[string][]string // object name -> containers defining it
	conflict map[string]bool
}

func newTable[T any](kind string) *table[T] {
	return &table[T]{kind: kind, objs: map[string]T{}, from: map[string][]string{}, conflict: map[string]bool{}}
}

// add records v for name. Equal definitions merge; merge, when non-nil, may
// combine two unequal ones (returning false when they conflict).
func (t *table[T]) add(name, container string, v T, merge func(into, v T) bool) {
	t.from[name] = append(t.from[name], container)
	cur, ok := t.objs[name]
	if !ok {
		t.objs[name] = v
		return
	}
	if sameJSON(cur, v) {
		return
	}
	if merge == nil || !merge(cur, v) {
		t.conflict[name] = true
	}
}

func (t *table[T]) result(b *builder) map[string]T {
	for _, n := range slices.Sorted(maps.Keys(t.conflict)) {
		cs := slices.Compact(slices.Sorted(slices.Values(t.from[n])))
		b.add(providers.SeverityError, "containers "+strings.Join(cs, ", "),
			fmt.Sprintf("%s %s is defined differently by several containers; left out", t.kind, n), t.kind+" "+n)
		delete(t.objs, n)
	}
	return t.objs
}

// mergeService merges load balancers whose settings other than servers are
// identical, appending v's servers that into lacks (by URL).
func mergeService(into, v *config.Service) bool {
	if into.LoadBalancer == nil || v.LoadBalancer == nil {
		return false
	}
	a, c := *into.LoadBalancer, *v.LoadBalancer
	a.Servers, c.Servers = nil, nil
	if !sameJSON(a, c) {
		return false
	}
	into.LoadBalancer.Servers = providers.UnionServers(into.LoadBalancer.Servers, v.LoadBalancer.Servers, func(s config.Server) string { return s.URL })
	return true
}

// sameJSON compares two values by their JSON encoding, which is what the
// aggregator hashes: equal encodings are the same configuration.
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
