package consul

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

// item is the configuration decoded from one instance. It is immutable
// once built, so Run can reuse it across snapshots.
type item struct {
	key  string // node + "\x00" + service ID: unique per instance (case 018)
	from origin
	cfg  *config.Configuration
	// forms holds the comparable form of each object, keyed by kind and
	// name (formKey); see itemForms.
	forms map[string][]byte
	// epSources locates each dynamic entrypoint the instance asks for:
	// "consul service redis instance n1/redis-1 tag gantry.entrypoints.x.address".
	epSources map[string]string
}

// origin is one instance: its Consul service name and "node/serviceID".
type origin struct{ service, instance string }

// Object kinds, as in problems ("router web").
const (
	kindRouter     = "router"
	kindService    = "service"
	kindMiddleware = "middleware"
	kindTransport  = "serversTransport"
	kindStore      = "tls store"
	kindEntryPoint = "entrypoint"
)

func formKey(kind, name string) string { return kind + "\x00" + name }

// itemForms computes the comparable form of every object of cfg: its JSON
// encoding (encoding/json sorts map keys, so equal values encode equally),
// and for a load-balancer service the encoding without its servers, since
// servers are merged rather than compared.
func itemForms(cfg *config.Configuration) map[string][]byte {
	forms := map[string][]byte{}
	add := func(kind, name string, v any) { forms[formKey(kind, name)] = canonical(v) }
	if h := cfg.HTTP; h != nil {
		for n, r := range h.Routers {
			add(kindRouter, n, r)
		}
		for n, s := range h.Services {
			if s.LoadBalancer != nil {
				lb := *s.LoadBalancer
				lb.Servers = nil
				add(kindService, n, &config.Service{LoadBalancer: &lb})
			} else {
				add(kindService, n, s)
			}
		}
		for n, m := range h.Middlewares {
			add(kindMiddleware, n, m)
		}
		for n, t := range h.ServersTransports {
			add(kindTransport, n, t)
		}
	}
	if cfg.TLS != nil {
		for n, s := range cfg.TLS.Stores {
			add(kindStore, n, s)
		}
	}
	for n, ep := range cfg.EntryPoints {
		add(kindEntryPoint, n, ep)
	}
	tcpForms(cfg, add)
	return forms
}

// mergeItems merges instance configurations in the given order, following
// Traefik's provider.Merge: an object defined identically by several
// instances is kept once; load-balancer services whose settings other than
// their servers agree are merged with the union of their servers (case
// 018); any other object defined differently by two instances is left out,
// with an error naming every instance that defines it. items are not
// modified: the result shares their objects, except merged services, which
// are copies.
func mergeItems(items []item) (*config.Configuration, []providers.Problem) {
	routers := newMerger[*config.Router](kindRouter, nil, nil)
	services := newMerger(kindService, cloneService, mergeServers)
	middlewares := newMerger[*config.Middleware](kindMiddleware, nil, nil)
	transports := newMerger[*config.ServersTransport](kindTransport, nil, nil)
	stores := newMerger[*config.TLSStore](kindStore, nil, nil)
	eps := newMerger[*config.DynamicEntryPoint](kindEntryPoint, nil, nil)
	for _, it := range items {
		eps.addAll(it.cfg.EntryPoints, it)
		if h := it.cfg.HTTP; h != nil {
			routers.addAll(h.Routers, it)
			services.addAll(h.Services, it)
			middlewares.addAll(h.Middlewares, it)
			transports.addAll(h.ServersTransports, it)
		}
		if it.cfg.TLS != nil {
			stores.addAll(it.cfg.TLS.Stores, it)
		}
	}
	out := config.New()
	var ps []providers.Problem
	ps = append(ps, routers.result(out.HTTP.Routers)...)
	ps = append(ps, services.result(out.HTTP.Services)...)
	ps = append(ps, middlewares.result(out.HTTP.Middlewares)...)
	ps = append(ps, transports.result(out.HTTP.ServersTransports)...)
	ps = append(ps, stores.result(out.TLS.Stores)...)
	ps = append(ps, mergeTCPItems(items, out)...)
	if len(eps.slots) > 0 {
		out.EntryPoints = map[string]*config.DynamicEntryPoint{}
		ps = append(ps, eps.result(out.EntryPoints)...)
		if len(out.EntryPoints) == 0 {
			out.EntryPoints = nil
		}
	}
	return out, ps
}

// entryPointOrigins locates each dynamic entrypoint of cfg at the first
// instance (in items' order) asking for it, for Snapshot.Origins.
func entryPointOrigins(items []item, cfg *config.Configuration) map[string]string {
	var out map[string]string
	for _, it := range items {
		for n, src := range it.epSources {
			if cfg.EntryPoints[n] == nil {
				continue
			}
			if out == nil {
				out = map[string]string{}
			}
			if _, ok := out[kindEntryPoint+" "+n]; !ok {
				out[kindEntryPoint+" "+n] = src
			}
		}
	}
	return out
}

// describe names instances for a problem's Source, grouped by service:
// "service web instances n1/web, n3/web; service api instance n1/api-1".
func describe(from []origin) string {
	from = slices.Clone(from)
	slices.SortFunc(from, func(a, b origin) int {
		return cmp.Or(strings.Compare(a.service, b.service), strings.Compare(a.instance, b.instance))
	})
	var parts []string
	for i := 0; i < len(from); {
		j := i
		var insts []string
		for ; j < len(from) && from[j].service == from[i].service; j++ {
			insts = append(insts, from[j].instance)
		}
		word := "instance"
		if len(insts) > 1 {
			word = "instances"
		}
		parts = append(parts, fmt.Sprintf("service %s %s %s", from[i].service, word, strings.Join(insts, ", ")))
		i = j
	}
	return strings.Join(parts, "; ")
}

// merger collects same-kind objects by name.
type merger[T any] struct {
	kind  string
	slots map[string]*slot[T]
	// clone, when set, copies the first value of each name, so that join
	// may modify the copy.
	clone func(T) T
	// join, when set, merges src into dst when their forms are equal.
	join func(dst, src T)
}

type slot[T any] struct {
	v        T
	form     []byte
	from     []origin
	conflict bool
}

func newMerger[T any](kind string, clone func(T) T, join func(dst, src T)) *merger[T] {
	return &merger[T]{kind: kind, slots: map[string]*slot[T]{}, clone: clone, join: join}
}

// addAll adds every object of one item; the order of objects within one
// item does not matter, as their names differ.
func (m *merger[T]) addAll(objs map[string]T, it item) {
	for name, v := range objs {
		m.add(name, v, it.forms[formKey(m.kind, name)], it.from)
	}
}

func (m *merger[T]) add(name string, v T, form []byte, where origin) {
	s := m.slots[name]
	if s == nil {
		s = &slot[T]{v: v, form: form, from: []origin{where}}
		if m.clone != nil {
			s.v = m.clone(v)
		}
		m.slots[name] = s
		return
	}
	if !slices.Contains(s.from, where) {
		s.from = append(s.from, where)
	}
	switch {
	case s.conflict:
	case !bytes.Equal(s.form, form):
		s.conflict = true
	case m.join != nil:
		m.join(s.v, v)
	}
}

func (m *merger[T]) result(dst map[string]T) []providers.Problem {
	var ps []providers.Problem
	for _, name := range slices.Sorted(maps.Keys(m.slots)) {
		s := m.slots[name]
		if !s.conflict {
			dst[name] = s.v
			continue
		}
		obj := m.kind + " " + name
		ps = append(ps, providers.Problem{
			Provider: CatalogName,
			Source:   "consul " + describe(s.from),
			Objects:  []string{obj},
			Message:  fmt.Sprintf("%s defined multiple times with different configurations; left out until the tags agree", obj),
			Severity: providers.SeverityError,
		})
	}
	return ps
}

// mergeServers adds the servers of src to dst (two load balancers with
// equal settings); servers with a URL already present are not repeated.
func mergeServers(dst, src *config.Service) {
	if dst.LoadBalancer == nil || src.LoadBalancer == nil {
		return // equal weighted, mirroring or failover services: nothing to add
	}
	dst.LoadBalancer.Servers = providers.UnionServers(dst.LoadBalancer.Servers, src.LoadBalancer.Servers, func(s config.Server) string { return s.URL })
}

// cloneService copies s deeply enough for mergeServers to append servers
// to the copy.
func cloneService(s *config.Service) *config.Service {
	c := *s
	if s.LoadBalancer != nil {
		lb := *s.LoadBalancer
		lb.Servers = slices.Clone(lb.Servers)
		c.LoadBalancer = &lb
	}
	return &c
}

// canonical is v's JSON encoding. Config values always encode.
func canonical(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(err.Error())
	}
	return b
}
