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

// item is the configuration decoded from one instance.
type item struct {
	key  string // node + "\x00" + service ID: unique per instance (case 018)
	from origin
	cfg  *config.Configuration
}

// mergeItems merges instance configurations in the given order, following
// Traefik's provider.Merge: an object defined identically by several
// instances is kept once; services whose settings other than their servers
// agree are merged with the union of their servers (case 018); any other
// object defined differently by two instances is left out, with an error
// naming every instance that defines it. items are not modified: the
// result shares their objects, except merged services, which are copies.
func mergeItems(items []item) (*config.Configuration, []providers.Problem) {
	routers := newMerger[*config.Router]("router", nil, nil)
	services := newMerger("service", cloneService, mergeServers)
	middlewares := newMerger[*config.Middleware]("middleware", nil, nil)
	transports := newMerger[*config.ServersTransport]("serversTransport", nil, nil)
	stores := newMerger[*config.TLSStore]("tls store", nil, nil)
	for _, it := range items {
		h := it.cfg.HTTP
		if h != nil {
			routers.addAll(h.Routers, it.from)
			services.addAll(h.Services, it.from)
			middlewares.addAll(h.Middlewares, it.from)
			transports.addAll(h.ServersTransports, it.from)
		}
		if it.cfg.TLS != nil {
			stores.addAll(it.cfg.TLS.Stores, it.from)
		}
	}
	out := config.New()
	var ps []providers.Problem
	ps = append(ps, routers.result(out.HTTP.Routers)...)
	ps = append(ps, services.result(out.HTTP.Services)...)
	ps = append(ps, middlewares.result(out.HTTP.Middlewares)...)
	ps = append(ps, transports.result(out.HTTP.ServersTransports)...)
	ps = append(ps, stores.result(out.TLS.Stores)...)
	return out, ps
}

// origin is one instance: its Consul service name and "node/serviceID".
type origin struct{ service, instance string }

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
	// join, when set, replaces plain equality: it merges src into dst and
	// reports whether the two were compatible.
	join func(dst, src T) bool
}

type slot[T any] struct {
	v        T
	form     []byte
	from     []origin
	conflict bool
}

func newMerger[T any](kind string, clone func(T) T, join func(dst, src T) bool) *merger[T] {
	return &merger[T]{kind: kind, slots: map[string]*slot[T]{}, clone: clone, join: join}
}

func (m *merger[T]) addAll(objs map[string]T, where origin) {
	for _, name := range slices.Sorted(maps.Keys(objs)) {
		m.add(name, objs[name], where)
	}
}

func (m *merger[T]) add(name string, v T, where origin) {
	s := m.slots[name]
	if s == nil {
		s = &slot[T]{v: v, from: []origin{where}}
		if m.clone != nil {
			s.v = m.clone(v)
		}
		m.slots[name] = s
		return
	}
	if !slices.Contains(s.from, where) {
		s.from = append(s.from, where)
	}
	if s.conflict {
		return
	}
	if m.join != nil {
		s.conflict = !m.join(s.v, v)
		return
	}
	if s.form == nil {
		s.form = canonical(s.v) // only names defined more than once are compared
	}
	if !bytes.Equal(s.form, canonical(v)) {
		s.conflict = true
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

// mergeServers merges the servers of src into dst when both are load
// balancers whose settings other than servers are equal, or when both are
// the same non-load-balancer service. Servers with a URL already present
// are not repeated.
func mergeServers(dst, src *config.Service) bool {
	if dst.LoadBalancer == nil || src.LoadBalancer == nil {
		return bytes.Equal(canonical(dst), canonical(src))
	}
	if !bytes.Equal(lbForm(dst.LoadBalancer), lbForm(src.LoadBalancer)) {
		return false
	}
	for _, s := range src.LoadBalancer.Servers {
		if !slices.ContainsFunc(dst.LoadBalancer.Servers, func(d config.Server) bool { return d.URL == s.URL }) {
			dst.LoadBalancer.Servers = append(dst.LoadBalancer.Servers, s)
		}
	}
	return true
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

// lbForm is the canonical form of lb without its servers.
func lbForm(lb *config.ServersLoadBalancer) []byte {
	c := *lb
	c.Servers = nil
	return canonical(&c)
}

// canonical is v's JSON encoding; encoding/json sorts map keys, so equal
// values encode equally. Config values always encode.
func canonical(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(err.Error())
	}
	return b
}
