package consul

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// buildTCPUDP completes an instance's TCP and UDP objects as Traefik's
// Consul catalog provider does (buildTCPServiceConfiguration,
// BuildTCPRouterConfiguration and the UDP twins): without a declared
// service, one named svcName is created; each load balancer's first server
// gets the instance's address and port (loadbalancer.server.port, else the
// registered port); a TCP router without a rule is left out; a router
// without a service is linked to the only service. declared holds the
// kinds whose tags failed to decode (a failed service counts as declared).
func buildTCPUDP(in instance, cfg *config.Configuration, e *api.ServiceEntry, svcName string, declared map[string]bool) []providers.Problem {
	var ps []providers.Problem
	if cfg.TCP != nil || declared["tcp"] {
		t := cfg.EnsureTCP()
		if len(t.Services) == 0 && !declared["tcp service"] {
			t.Services[svcName] = &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{}}
		}
		dropped := completeServers(in, e, providers.KindTCPService, t.Services, tcpFirstServer, &ps)
		hasRule := func(rn string, r *config.TCPRouter) bool {
			if strings.TrimSpace(r.Rule) != "" {
				return true
			}
			obj := providers.KindTCPRouter + " " + rn
			ps = append(ps, in.problem(obj, providers.SeverityError, []string{obj}, "no rule (TCP routers have no default rule; use HostSNI(`*`) to match every connection); left out"))
			return false
		}
		linkRouters(in, "tcp", t.Routers, hasRule, func(r *config.TCPRouter) *string { return &r.Service }, t.Services, dropped, &ps)
	}
	if cfg.UDP != nil || declared["udp"] {
		u := cfg.EnsureUDP()
		if len(u.Services) == 0 && !declared["udp service"] {
			u.Services[svcName] = &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{}}
		}
		dropped := completeServers(in, e, providers.KindUDPService, u.Services, udpFirstServer, &ps)
		linkRouters(in, "udp", u.Routers, nil, func(r *config.UDPRouter) *string { return &r.Service }, u.Services, dropped, &ps)
	}
	return ps
}

// tcpFirstServer and udpFirstServer give completeServers a service's only
// server: ok false without a load balancer (weighted), else the first
// server's address and port, the others dropped, one added when there is
// none.
func tcpFirstServer(s *config.TCPService) (addr, port *string, ok bool) {
	if s.LoadBalancer == nil {
		return nil, nil, false
	}
	return onlyServer(&s.LoadBalancer.Servers, func(v *config.TCPServer) (*string, *string) { return &v.Address, &v.Port })
}

func udpFirstServer(s *config.UDPService) (addr, port *string, ok bool) {
	if s.LoadBalancer == nil {
		return nil, nil, false
	}
	return onlyServer(&s.LoadBalancer.Servers, func(v *config.UDPServer) (*string, *string) { return &v.Address, &v.Port })
}

// onlyServer keeps the first of servers (an empty one added when there is
// none) and returns its address and port fields.
func onlyServer[T any](servers *[]T, fields func(*T) (addr, port *string)) (addr, port *string, ok bool) {
	if len(*servers) == 0 {
		*servers = make([]T, 1)
	}
	*servers = (*servers)[:1]
	addr, port = fields(&(*servers)[0])
	return addr, port, true
}

// completeServers gives the server of each load balancer of services (kind
// providers.KindTCPService or providers.KindUDPService) the instance's address and port
// (instanceAddress); a service whose address cannot be made is left out
// with a problem added to ps. It returns the names left out, in order.
func completeServers[S any](in instance, e *api.ServiceEntry, kind string, services map[string]*S,
	first func(*S) (addr, port *string, ok bool), ps *[]providers.Problem) []string {
	var dropped []string
	for _, sn := range slices.Sorted(maps.Keys(services)) {
		addr, port, ok := first(services[sn])
		if !ok {
			continue
		}
		a, err := instanceAddress(e, *addr, *port)
		if err != nil {
			delete(services, sn)
			dropped = append(dropped, sn)
			*ps = append(*ps, in.problem(kind+" "+sn, providers.SeverityError, []string{kind + " " + sn}, err.Error()))
			continue
		}
		*addr, *port = a, ""
	}
	return dropped
}

// linkRouters links each router of proto ("tcp", "udp") without a service
// (service gives its field) to the only one of services; with several,
// or none left (dropped: those left out, named), the router is left out
// with a problem added to ps. A router keep (nil: all) refuses, having
// said why, is left out first.
func linkRouters[R, S any](in instance, proto string, routers map[string]*R, keep func(string, *R) bool,
	service func(*R) *string, services map[string]*S, dropped []string, ps *[]providers.Problem) {
	for _, rn := range slices.Sorted(maps.Keys(routers)) {
		if keep != nil && !keep(rn, routers[rn]) {
			delete(routers, rn)
			continue
		}
		svc := service(routers[rn])
		if *svc != "" {
			continue
		}
		if len(services) != 1 {
			obj := proto + " router " + rn
			delete(routers, rn)
			*ps = append(*ps, in.problem(obj, providers.SeverityError, []string{obj}, unlinkedMessage(proto, len(services), dropped)))
			continue
		}
		for sn := range services {
			*svc = sn
		}
	}
}

// instanceAddress is "addr:port" for a TCP or UDP server of instance e.
func instanceAddress(e *api.ServiceEntry, addr, port string) (string, error) {
	if addr != "" {
		if port != "" {
			return "", errors.New("loadbalancer.server.address excludes loadbalancer.server.port")
		}
		return addr, nil
	}
	host := e.Service.Address
	if host == "" {
		host = e.Node.Address
	}
	if host == "" {
		return "", errors.New("instance has neither a service address nor a node address")
	}
	if port == "" && e.Service.Port > 0 {
		port = strconv.Itoa(e.Service.Port)
	}
	if port == "" {
		return "", errors.New("no port: register the service with a port or set loadbalancer.server.port")
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", fmt.Errorf("port %q: want 1-65535", port)
	}
	return net.JoinHostPort(host, port), nil
}

// unlinkedMessage says why a router of proto ("tcp", "udp") that names no
// service could not be linked to the instance's only service: there are
// several, or the only one was left out by its own error (named, so the
// fix is looked for there, not in the router's tags).
func unlinkedMessage(proto string, services int, dropped []string) string {
	if services == 0 && len(dropped) == 1 {
		return "no service of its own, and the only " + proto + " service " + dropped[0] + " was left out by its error (see it); left out"
	}
	return "no service, and it cannot be linked automatically with several services; left out"
}
