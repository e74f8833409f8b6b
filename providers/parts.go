package providers

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/gantry-proxy/gantry/config"
)

// Part is the configuration one source of a label or tag provider
// contributes before merging: a container (Docker), an instance (Consul
// catalog). MergeParts reads its HTTP, TCP and UDP objects, its TLS stores
// and its dynamic entrypoints; TLS options and certificates are not
// labels' business and are ignored.
type Part[S comparable] struct {
	// From names the part in problems: a container name, a Consul
	// service and instance.
	From   S
	Config *config.Configuration
	// Forms holds the comparable form of each object (PartForms(Config));
	// nil: MergeParts computes it. A provider that merges the same part
	// in several builds computes it once.
	Forms map[string][]byte
	// EntryPoints locates each dynamic entrypoint of Config, for
	// Snapshot.Origins: "container web-1 label gantry.entrypoints.redis.address".
	EntryPoints map[string]string
}

// The object kinds of MergeParts, as problems name them ("router web",
// "tcp service db").
const (
	KindRouter        = "router"
	KindService       = "service"
	KindMiddleware    = "middleware"
	KindTransport     = "serversTransport"
	KindTLSStore      = "tls store"
	KindEntryPoint    = "entrypoint"
	KindTCPRouter     = "tcp router"
	KindTCPService    = "tcp service"
	KindTCPMiddleware = "tcp middleware"
	KindTCPTransport  = "tcp serversTransport"
	KindUDPRouter     = "udp router"
	KindUDPService    = "udp service"
)

// MergeParts merges the parts of one label or tag provider, in the given
// order, into one configuration, as Traefik's provider.Merge does
// (pkg/provider/configuration.go) for every protocol: an object defined
// identically by several parts is kept once; same-named load-balancer
// services (HTTP, TCP or UDP) whose settings other than their servers
// agree are merged with the union of their servers, by URL or address, in
// part order (scaled replicas share one service); any other object defined
// differently by two parts is left out, and conflict makes the problem
// naming it (object: "router web") and the parts defining it (from: in
// order of first definition, each once). Problems come in kind order
// (routers, services, middlewares, transports, TLS stores, then TCP, UDP,
// entrypoints), by name within a kind.
//
// origins locates each dynamic entrypoint kept ("entrypoint redis") at the
// first part asking for it; nil when there is none. The parts are not
// modified: the result shares their objects, except merged services,
// which are new.
func MergeParts[S comparable](parts []Part[S], conflict func(object string, from []S) Problem) (cfg *config.Configuration, origins map[string]string, problems []Problem) {
	var (
		routers     = newPartTable[S, *config.Router](KindRouter, nil)
		services    = newPartTable[S](KindService, unionLB(func(s *config.Service) **config.ServersLoadBalancer { return &s.LoadBalancer }, func(l *config.ServersLoadBalancer) *[]config.Server { return &l.Servers }, func(s config.Server) string { return s.URL }))
		middlewares = newPartTable[S, *config.Middleware](KindMiddleware, nil)
		transports  = newPartTable[S, *config.ServersTransport](KindTransport, nil)
		stores      = newPartTable[S, *config.TLSStore](KindTLSStore, nil)
		tcpRouters  = newPartTable[S, *config.TCPRouter](KindTCPRouter, nil)
		tcpServices = newPartTable[S](KindTCPService, unionLB(func(s *config.TCPService) **config.TCPServersLoadBalancer { return &s.LoadBalancer }, func(l *config.TCPServersLoadBalancer) *[]config.TCPServer { return &l.Servers }, func(s config.TCPServer) string { return s.Address }))
		tcpMWs      = newPartTable[S, *config.TCPMiddleware](KindTCPMiddleware, nil)
		tcpTrans    = newPartTable[S, *config.TCPServersTransport](KindTCPTransport, nil)
		udpRouters  = newPartTable[S, *config.UDPRouter](KindUDPRouter, nil)
		udpServices = newPartTable[S](KindUDPService, unionLB(func(s *config.UDPService) **config.UDPServersLoadBalancer { return &s.LoadBalancer }, func(l *config.UDPServersLoadBalancer) *[]config.UDPServer { return &l.Servers }, func(s config.UDPServer) string { return s.Address }))
		eps         = newPartTable[S, *config.DynamicEntryPoint](KindEntryPoint, nil)
	)
	for _, p := range parts {
		c, forms := p.Config, p.Forms
		if forms == nil {
			forms = PartForms(c)
		}
		if h := c.HTTP; h != nil {
			routers.addAll(h.Routers, p.From, forms)
			services.addAll(h.Services, p.From, forms)
			middlewares.addAll(h.Middlewares, p.From, forms)
			transports.addAll(h.ServersTransports, p.From, forms)
		}
		if c.TLS != nil {
			stores.addAll(c.TLS.Stores, p.From, forms)
		}
		if t := c.TCP; t != nil {
			tcpRouters.addAll(t.Routers, p.From, forms)
			tcpServices.addAll(t.Services, p.From, forms)
			tcpMWs.addAll(t.Middlewares, p.From, forms)
			tcpTrans.addAll(t.ServersTransports, p.From, forms)
		}
		if u := c.UDP; u != nil {
			udpRouters.addAll(u.Routers, p.From, forms)
			udpServices.addAll(u.Services, p.From, forms)
		}
		eps.addAll(c.EntryPoints, p.From, forms)
	}
	out := config.New()
	out.TLS = nil
	ps := &problems
	out.HTTP.Routers = routers.result(conflict, ps)
	out.HTTP.Services = services.result(conflict, ps)
	out.HTTP.Middlewares = middlewares.result(conflict, ps)
	out.HTTP.ServersTransports = transports.result(conflict, ps)
	if st := stores.result(conflict, ps); len(st) > 0 {
		out.TLS = &config.TLSConfiguration{Stores: st}
	}
	t := &config.TCPConfiguration{Routers: tcpRouters.result(conflict, ps), Services: tcpServices.result(conflict, ps),
		Middlewares: tcpMWs.result(conflict, ps), ServersTransports: tcpTrans.result(conflict, ps)}
	if !t.Empty() {
		out.TCP = t
	}
	u := &config.UDPConfiguration{Routers: udpRouters.result(conflict, ps), Services: udpServices.result(conflict, ps)}
	if !u.Empty() {
		out.UDP = u
	}
	if e := eps.result(conflict, ps); len(e) > 0 {
		out.EntryPoints = e
	}
	for _, p := range parts {
		for n, src := range p.EntryPoints {
			if out.EntryPoints[n] == nil {
				continue
			}
			if origins == nil {
				origins = map[string]string{}
			}
			if _, ok := origins[KindEntryPoint+" "+n]; !ok {
				origins[KindEntryPoint+" "+n] = src
			}
		}
	}
	return out, origins, problems
}

// PartForms computes the comparable form of every object of cfg that
// MergeParts merges, keyed by kind and name: its JSON encoding
// (encoding/json sorts map keys, so equal values encode equally), and for
// a load-balancer service the encoding of the load balancer without its
// servers, since servers are merged rather than compared.
func PartForms(cfg *config.Configuration) map[string][]byte {
	forms := map[string][]byte{}
	if h := cfg.HTTP; h != nil {
		addForms(forms, KindRouter, h.Routers, canonical)
		addForms(forms, KindService, h.Services, lbForm)
		addForms(forms, KindMiddleware, h.Middlewares, canonical)
		addForms(forms, KindTransport, h.ServersTransports, canonical)
	}
	if cfg.TLS != nil {
		addForms(forms, KindTLSStore, cfg.TLS.Stores, canonical)
	}
	if t := cfg.TCP; t != nil {
		addForms(forms, KindTCPRouter, t.Routers, canonical)
		addForms(forms, KindTCPService, t.Services, lbForm)
		addForms(forms, KindTCPMiddleware, t.Middlewares, canonical)
		addForms(forms, KindTCPTransport, t.ServersTransports, canonical)
	}
	if u := cfg.UDP; u != nil {
		addForms(forms, KindUDPRouter, u.Routers, canonical)
		addForms(forms, KindUDPService, u.Services, lbForm)
	}
	addForms(forms, KindEntryPoint, cfg.EntryPoints, canonical)
	return forms
}

func addForms[T any](forms map[string][]byte, kind string, objs map[string]T, form func(any) []byte) {
	for n, v := range objs {
		forms[formKey(kind, n)] = form(v)
	}
}

// lbForm is the form of an HTTP, TCP or UDP service: a load balancer
// without its servers (nothing else of the service), any other kind of
// service as it is.
func lbForm(svc any) []byte {
	b := canonical(svc)
	var s struct {
		LoadBalancer map[string]json.RawMessage `json:"loadBalancer"`
	}
	if json.Unmarshal(b, &s) != nil || s.LoadBalancer == nil {
		return b
	}
	delete(s.LoadBalancer, "servers")
	return canonical(s)
}

func formKey(kind, name string) string { return kind + "\x00" + name }

// canonical is v's JSON encoding. Configuration values always encode; an
// error (a NaN in plugin options) encodes as its text, unequal to any value.
func canonical(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(err.Error())
	}
	return b
}

// partTable collects the same-kind objects of every part by name.
type partTable[S comparable, T any] struct {
	kind  string
	slots map[string]*partSlot[S, T]
	// union, when set, merges two objects of equal forms (load-balancer
	// services: the union of their servers) into a new one.
	union func(a, b T) T
}

type partSlot[S comparable, T any] struct {
	v        T
	form     []byte
	from     []S
	conflict bool
}

func newPartTable[S comparable, T any](kind string, union func(a, b T) T) *partTable[S, T] {
	return &partTable[S, T]{kind: kind, slots: map[string]*partSlot[S, T]{}, union: union}
}

// addAll adds every object of one part; the order of objects within a part
// does not matter, as their names differ.
func (t *partTable[S, T]) addAll(objs map[string]T, from S, forms map[string][]byte) {
	for name, v := range objs {
		form := forms[formKey(t.kind, name)]
		s := t.slots[name]
		if s == nil {
			t.slots[name] = &partSlot[S, T]{v: v, form: form, from: []S{from}}
			continue
		}
		if !slices.Contains(s.from, from) {
			s.from = append(s.from, from)
		}
		switch {
		case s.conflict:
		case !bytes.Equal(s.form, form):
			s.conflict = true
		case t.union != nil:
			s.v = t.union(s.v, v)
		}
	}
}

// result returns the objects kept, by name; each one left out gets its
// problem (conflict) appended to ps.
func (t *partTable[S, T]) result(conflict func(object string, from []S) Problem, ps *[]Problem) map[string]T {
	out := make(map[string]T, len(t.slots))
	for _, name := range slices.Sorted(maps.Keys(t.slots)) {
		s := t.slots[name]
		if s.conflict {
			*ps = append(*ps, conflict(t.kind+" "+name, s.from))
			continue
		}
		out[name] = s.v
	}
	return out
}

// unionLB returns the union of two services of type T whose load
// balancers (lb: its field) have equal settings: a copy of a with the
// servers (servers: the load balancer's field) of b it lacks, by key (URL
// or address), appended (Traefik's ServersLoadBalancer.Merge and its TCP
// and UDP twins). Other kinds of services, being equal, union to a.
func unionLB[T, L, V any](lb func(*T) **L, servers func(*L) *[]V, key func(V) string) func(a, b *T) *T {
	return func(a, b *T) *T {
		if a == nil || b == nil {
			return a
		}
		la, lb2 := *lb(a), *lb(b)
		if la == nil || lb2 == nil {
			return a
		}
		c, l := *a, *la
		*servers(&l) = UnionServers(slices.Clone(*servers(la)), *servers(lb2), key)
		*lb(&c) = &l
		return &c
	}
}
