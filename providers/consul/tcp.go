package consul

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// buildTCPUDP completes an instance's TCP and UDP objects with
// providers.L4Defaults, as Traefik's Consul catalog provider does
// (buildTCPServiceConfiguration, BuildTCPRouterConfiguration and the UDP
// twins): without a declared service, one named svcName is created; each
// load balancer keeps one server, with the instance's address and port
// (loadbalancer.server.port, else the registered port); a TCP router
// without a rule is left out; a router without a service is linked to the
// only service. declared holds the kinds whose tags failed to decode (a
// failed service counts as declared).
func buildTCPUDP(in instance, cfg *config.Configuration, e *api.ServiceEntry, svcName string, declared map[string]bool) []providers.Problem {
	var ps []providers.Problem
	fail := func(obj, msg string) {
		ps = append(ps, in.problem(obj, providers.SeverityError, []string{obj}, msg))
	}
	providers.L4Defaults{
		Service: svcName,
		Failed:  func(kind string) bool { return declared[kind] },
		Server: func(proto, sn string, servers providers.L4Servers) bool {
			addr, port := servers.First(true)
			a, err := instanceAddress(e, *addr, *port)
			if err != nil {
				fail(proto+" service "+sn, err.Error())
				return false
			}
			*addr, *port = a, ""
			return true
		},
		NoRule: func(rn string) {
			fail(providers.KindTCPRouter+" "+rn, "no rule (TCP routers have no default rule; use HostSNI(`*`) to match every connection); left out")
		},
		Unlinked: func(proto, rn string, services int, dropped []string) {
			fail(proto+" router "+rn, unlinkedMessage(proto, services, dropped))
		},
	}.Complete(cfg)
	return ps
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
