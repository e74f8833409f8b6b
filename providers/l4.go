package providers

import (
	"maps"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// L4Defaults completes the TCP and UDP objects that the labels or tags of
// one container or instance declare, the same way for both protocols and
// every label provider (Traefik's buildTCPServiceConfiguration,
// BuildTCPRouterConfiguration and BuildUDPRouterConfiguration,
// pkg/provider):
//
//  1. a protocol whose objects are declared (or failed to decode:
//     Failed(proto)) gets, when it declares no service and none failed to
//     decode (Failed(proto+" service")), a service named Service: a load
//     balancer without servers;
//  2. Server completes the servers of each load-balancer service, in name
//     order; a service it refuses is left out (Server says why) and
//     counted as dropped;
//  3. a TCP router without a rule is left out (NoRule says why);
//  4. a router without a service is linked to the only service of its
//     protocol; with several, none left, or (StrictLink) any service of
//     the protocol failed (Failed(proto+" service")), it is left out
//     (Unlinked says why).
//
// proto is "tcp" or "udp" in every callback.
type L4Defaults struct {
	Service string
	Failed  func(kind string) bool
	Server  func(proto, service string, servers L4Servers) bool
	// StrictLink refuses to link a router while any service of its
	// protocol failed, even when one is left (Docker's rule).
	StrictLink bool
	NoRule     func(router string)
	// Unlinked gets the services left (count) and those Server dropped.
	Unlinked func(proto, router string, services int, dropped []string)
}

// L4Servers is the server list of one TCP or UDP load balancer, for
// L4Defaults.Server.
type L4Servers interface {
	// Clear drops every server.
	Clear()
	// First returns the address and port fields of the first server,
	// adding an empty one when there is none; only drops the others.
	First(only bool) (addr, port *string)
}

// Complete completes cfg's TCP and UDP objects (see L4Defaults).
func (d L4Defaults) Complete(cfg *config.Configuration) {
	if cfg.TCP != nil || d.Failed("tcp") {
		t := cfg.EnsureTCP()
		empty := func() *config.TCPService { return &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{}} }
		dropped := completeL4(d, "tcp", t.Services, empty, func(s *config.TCPService) L4Servers {
			if s.LoadBalancer == nil {
				return nil
			}
			return l4Servers[config.TCPServer]{&s.LoadBalancer.Servers, func(v *config.TCPServer) (*string, *string) { return &v.Address, &v.Port }}
		})
		hasRule := func(rn string, r *config.TCPRouter) bool {
			if strings.TrimSpace(r.Rule) != "" {
				return true
			}
			d.NoRule(rn)
			return false
		}
		linkL4(d, "tcp", t.Routers, hasRule, func(r *config.TCPRouter) *string { return &r.Service }, t.Services, dropped)
	}
	if cfg.UDP != nil || d.Failed("udp") {
		u := cfg.EnsureUDP()
		empty := func() *config.UDPService { return &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{}} }
		dropped := completeL4(d, "udp", u.Services, empty, func(s *config.UDPService) L4Servers {
			if s.LoadBalancer == nil {
				return nil
			}
			return l4Servers[config.UDPServer]{&s.LoadBalancer.Servers, func(v *config.UDPServer) (*string, *string) { return &v.Address, &v.Port }}
		})
		linkL4(d, "udp", u.Routers, nil, func(r *config.UDPRouter) *string { return &r.Service }, u.Services, dropped)
	}
}

// completeL4 adds the service d.Service (empty) when the protocol
// declares none and none failed to decode, then runs d.Server on each
// load-balancer service (servers: nil for another kind), deleting those it
// refuses; it returns their names.
func completeL4[S any](d L4Defaults, proto string, services map[string]*S, empty func() *S, servers func(*S) L4Servers) []string {
	if len(services) == 0 && !d.Failed(proto+" service") {
		services[d.Service] = empty()
	}
	var dropped []string
	for _, sn := range slices.Sorted(maps.Keys(services)) {
		if lb := servers(services[sn]); lb != nil && !d.Server(proto, sn, lb) {
			delete(services, sn)
			dropped = append(dropped, sn)
		}
	}
	return dropped
}

// linkL4 links each router without a service (service: its field) to the
// only one of services, or leaves it out (see L4Defaults). A router keep
// (nil: all) refuses, having said why, is left out first.
func linkL4[R, S any](d L4Defaults, proto string, routers map[string]*R, keep func(string, *R) bool,
	service func(*R) *string, services map[string]*S, dropped []string) {
	for _, rn := range slices.Sorted(maps.Keys(routers)) {
		if keep != nil && !keep(rn, routers[rn]) {
			delete(routers, rn)
			continue
		}
		svc := service(routers[rn])
		if *svc != "" {
			continue
		}
		if len(services) != 1 || (d.StrictLink && d.Failed(proto+" service")) {
			d.Unlinked(proto, rn, len(services), dropped)
			delete(routers, rn)
			continue
		}
		for sn := range services {
			*svc = sn
		}
	}
}

// l4Servers is L4Servers over a TCP or UDP server slice; fields gives a
// server's address and port.
type l4Servers[T any] struct {
	s      *[]T
	fields func(*T) (addr, port *string)
}

func (l l4Servers[T]) Clear() { *l.s = nil }

func (l l4Servers[T]) First(only bool) (addr, port *string) {
	if len(*l.s) == 0 {
		*l.s = make([]T, 1)
	}
	if only {
		*l.s = (*l.s)[:1]
	}
	return l.fields(&(*l.s)[0])
}
