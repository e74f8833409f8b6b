package docker

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// hasTCPUDP reports whether the container's labels declare TCP or UDP
// objects, including ones left out by decode errors.
func hasTCPUDP(cfg *config.Configuration, broken map[string]bool) bool {
	if !cfg.TCP.Empty() || !cfg.UDP.Empty() {
		return true
	}
	for o := range broken {
		if strings.HasPrefix(o, "tcp ") || strings.HasPrefix(o, "udp ") {
			return true
		}
	}
	return false
}

// tcpUDP completes the container's TCP and UDP objects as Traefik's
// DynConfBuilder does (buildTCPServiceConfiguration,
// BuildTCPRouterConfiguration and their UDP twins, pkg/provider/docker):
// without a declared service, one named after the container's service name
// is created (the implicit TCP service per container); each load balancer's
// first server gets the container's address and port
// (loadbalancer.server.port, else the lowest exposed port) unless it has an
// address already; a router without a service is linked to the only
// service, and left out with a problem when there are several. withServers
// false (not running, or not healthy with allowEmptyServices) keeps the
// services with no server, as Traefik does.
func (b *builder) tcpUDP(c containerInfo, cfg *config.Configuration, name string, self map[string]bool, withServers bool, broken map[string]bool) {
	src := c.source()
	if t := cfg.TCP; t != nil || brokenKind(broken, "tcp ") {
		t = cfg.EnsureTCP()
		if len(t.Services) == 0 && !brokenKind(broken, "tcp service ") {
			t.Services[name] = &config.TCPService{LoadBalancer: &config.TCPServersLoadBalancer{}}
		}
		completeServers(b, c, "tcp", t.Services, tcpFirstServer, self, withServers, broken)
		hasRule := func(rn string, r *config.TCPRouter) bool {
			if strings.TrimSpace(r.Rule) != "" {
				return true
			}
			b.add(providers.SeverityError, src, fmt.Sprintf("tcp router %s has no rule (TCP routers have no default rule; use HostSNI(`*`) to match every connection); left out", rn), "tcp router "+rn)
			return false
		}
		linkRouters(b, src, "tcp", t.Routers, hasRule, func(r *config.TCPRouter) *string { return &r.Service }, t.Services, broken)
	}
	if u := cfg.UDP; u != nil || brokenKind(broken, "udp ") {
		u = cfg.EnsureUDP()
		if len(u.Services) == 0 && !brokenKind(broken, "udp service ") {
			u.Services[name] = &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{}}
		}
		completeServers(b, c, "udp", u.Services, udpFirstServer, self, withServers, broken)
		linkRouters(b, src, "udp", u.Routers, nil, func(r *config.UDPRouter) *string { return &r.Service }, u.Services, broken)
	}
}

// tcpFirstServer and udpFirstServer give completeServers a service's
// servers: ok false without a load balancer (weighted), else the servers
// dropped (first nil) or the first one's address and port, a server added
// when there is none.
func tcpFirstServer(s *config.TCPService, clear bool) (addr, port *string, ok bool) {
	if s.LoadBalancer == nil {
		return nil, nil, false
	}
	return firstServer(&s.LoadBalancer.Servers, clear, func(v *config.TCPServer) (*string, *string) { return &v.Address, &v.Port })
}

func udpFirstServer(s *config.UDPService, clear bool) (addr, port *string, ok bool) {
	if s.LoadBalancer == nil {
		return nil, nil, false
	}
	return firstServer(&s.LoadBalancer.Servers, clear, func(v *config.UDPServer) (*string, *string) { return &v.Address, &v.Port })
}

// firstServer drops servers (clear) or returns the address and port fields
// of the first one, adding an empty server when there is none.
func firstServer[T any](servers *[]T, clear bool, fields func(*T) (addr, port *string)) (addr, port *string, ok bool) {
	if clear {
		*servers = nil
		return nil, nil, true
	}
	if len(*servers) == 0 {
		*servers = make([]T, 1)
	}
	addr, port = fields(&(*servers)[0])
	return addr, port, true
}

// completeServers gives the first server of each load balancer of services
// (proto "tcp" or "udp") the container's address and port unless it has an
// address; withServers false drops the servers instead. A service whose
// address cannot be made is left out with a problem and marked broken.
func completeServers[S any](b *builder, c containerInfo, proto string, services map[string]*S,
	first func(s *S, clear bool) (addr, port *string, ok bool), self map[string]bool, withServers bool, broken map[string]bool) {
	for _, sn := range slices.Sorted(maps.Keys(services)) {
		addr, port, ok := first(services[sn], !withServers)
		if !ok || !withServers {
			continue
		}
		a, err := b.serverAddress(c, proto, sn, *addr, *port, self)
		if err != nil {
			obj := proto + " service " + sn
			b.add(providers.SeverityError, err.source, err.msg+"; "+obj+" left out", obj)
			delete(services, sn)
			broken[obj] = true
			continue
		}
		*addr, *port = a, ""
	}
}

// linkRouters links each router without a service (service gives its
// field) to the only one of services (Traefik BuildTCPRouterConfiguration
// and its UDP twin); with several, or when one was left out (broken), the
// router is left out with a problem. A router keep (nil: all) refuses,
// having said why, is left out first.
func linkRouters[R, S any](b *builder, src, proto string, routers map[string]*R, keep func(string, *R) bool,
	service func(*R) *string, services map[string]*S, broken map[string]bool) {
	for _, rn := range slices.Sorted(maps.Keys(routers)) {
		if keep != nil && !keep(rn, routers[rn]) {
			delete(routers, rn)
			continue
		}
		svc := service(routers[rn])
		if *svc != "" {
			continue
		}
		if len(services) != 1 || brokenKind(broken, proto+" service ") {
			b.add(providers.SeverityError, src, unlinkedMessage(proto, rn, len(services), broken), proto+" router "+rn)
			delete(routers, rn)
			continue
		}
		for sn := range services {
			*svc = sn
		}
	}
}

// unlinkedMessage says why router rn of proto ("tcp", "udp"), which names
// no service, could not be linked to the container's only service: there
// are several (services kept plus those left out by errors), or the only
// one was left out by its own error (named, so the fix is looked for
// there, not in the router's labels).
func unlinkedMessage(proto, rn string, services int, broken map[string]bool) string {
	var gone []string
	for o := range broken {
		if sn, ok := strings.CutPrefix(o, proto+" service "); ok {
			gone = append(gone, sn)
		}
	}
	slices.Sort(gone)
	if services == 0 && len(gone) == 1 {
		return fmt.Sprintf("%s router %s has no service of its own and the container's only %s service %s was left out by its error (see it); left out", proto, rn, proto, gone[0])
	}
	return fmt.Sprintf("%s router %s has no service and cannot be linked automatically with several services; left out", proto, rn)
}

func brokenKind(broken map[string]bool, prefix string) bool {
	for o := range broken {
		if strings.HasPrefix(o, prefix) {
			return true
		}
	}
	return false
}

// serverAddress returns "ip:port" for a TCP or UDP server: addr when the
// labels gave one, else the container's address with port (or its lowest
// exposed port). Errors name the label.
func (b *builder) serverAddress(c containerInfo, proto, svc, addr, port string, self map[string]bool) (string, *serverError) {
	src := c.source()
	key := b.protoLabel(c, proto, svc, "port")
	if addr != "" {
		if port != "" {
			return "", &serverError{src + " label " + key, "defining port is not allowed when address is defined"}
		}
		return addr, nil
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", &serverError{src + " label " + key, fmt.Sprintf("invalid port %q: want a number from 1 to 65535", port)}
		}
	}
	ip, p, err := b.address(c, port, self)
	if err != nil {
		if port == "" {
			err.msg = strings.Replace(err.msg, ".http.services.", "."+proto+".services.", 1)
		}
		return "", err
	}
	return net.JoinHostPort(ip, p), nil
}

// protoLabel is labelFor for tcp and udp services.
func (b *builder) protoLabel(c containerInfo, proto, svc, field string) string {
	suffix := strings.ToLower("." + proto + ".services." + svc + ".loadbalancer.server." + field)
	for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
		if strings.HasSuffix(strings.ToLower(k), suffix) {
			return k
		}
	}
	return b.s.prefixes[0] + "." + proto + ".services." + svc + ".loadbalancer.server." + field
}
