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
	return !cfg.TCP.Empty() || !cfg.UDP.Empty() || countBroken(broken, "tcp")+countBroken(broken, "udp") > 0
}

// tcpUDP completes the container's TCP and UDP objects with
// providers.L4Defaults, as Traefik's DynConfBuilder does
// (buildTCPServiceConfiguration, BuildTCPRouterConfiguration and their UDP
// twins, pkg/provider/docker): without a declared service, one named after
// the container's service name is created (the implicit TCP service per
// container); each load balancer's first server gets the container's
// address and port (loadbalancer.server.port, else the lowest exposed
// port) unless it has an address already; a router without a service is
// linked to the only service, and left out with a problem when there are
// several or one failed. withServers false (not running, or not healthy
// with allowEmptyServices) keeps the services with no server, as Traefik
// does.
func (b *builder) tcpUDP(c containerInfo, cfg *config.Configuration, name string, self map[string]bool, withServers bool, broken map[string]bool) {
	src := c.source()
	providers.L4Defaults{
		Service:    name,
		Failed:     func(kind string) bool { return countBroken(broken, kind) > 0 },
		StrictLink: true,
		Server: func(proto, sn string, servers providers.L4Servers) bool {
			if !withServers {
				servers.Clear()
				return true
			}
			addr, port := servers.First(false)
			a, err := b.serverAddress(c, proto, sn, *addr, *port, self)
			if err != nil {
				obj := proto + " service " + sn
				b.add(providers.SeverityError, err.source, err.msg+"; "+obj+" left out", obj)
				broken[obj] = true
				return false
			}
			*addr, *port = a, ""
			return true
		},
		NoRule: func(rn string) {
			b.add(providers.SeverityError, src, fmt.Sprintf("tcp router %s has no rule (TCP routers have no default rule; use HostSNI(`*`) to match every connection); left out", rn), "tcp router "+rn)
		},
		Unlinked: func(proto, rn string, services int, _ []string) {
			b.add(providers.SeverityError, src, unlinkedMessage(proto, rn, services, broken), proto+" router "+rn)
		},
	}.Complete(cfg)
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
