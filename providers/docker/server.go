package docker

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// serverError is a problem with one service's server: where it comes from
// (the container, or the container and label) and what is wrong.
type serverError struct {
	source string
	msg    string
}

// addServer resolves the first server of lb from the container's address
// (Traefik's addServer): an explicit loadbalancer.server.url is kept as is;
// otherwise the URL is scheme://ip:port, where port is the server.port label
// or the container's lowest exposed port, and scheme defaults to http.
// Further servers (servers[1]…, a Gantry extension) must carry a URL.
func (b *builder) addServer(c containerInfo, svc string, lb *config.ServersLoadBalancer, self map[string]bool) *serverError {
	src := c.source()
	if len(lb.Servers) == 0 {
		lb.Servers = []config.Server{{}}
	}
	for i := 1; i < len(lb.Servers); i++ {
		if lb.Servers[i].URL == "" {
			return &serverError{src, fmt.Sprintf("servers[%d] has no url (only the first server takes the container's address)", i)}
		}
	}
	s := &lb.Servers[0]
	if s.URL != "" {
		if s.Port != "" || s.Scheme != "" {
			return &serverError{src + " label " + b.labelFor(c, svc, "url"), "defining scheme or port is not allowed when url is defined"}
		}
		return nil
	}
	port := s.Port
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return &serverError{src + " label " + b.labelFor(c, svc, "port"), fmt.Sprintf("invalid port %q: want a number from 1 to 65535", port)}
		}
	}
	scheme := s.Scheme
	if scheme == "" {
		scheme = "http"
	}
	ip, port, err := b.address(c, port, self)
	if err != nil {
		return err
	}
	s.URL = scheme + "://" + net.JoinHostPort(ip, port)
	s.Port, s.Scheme = "", ""
	return nil
}

// address returns the IP and port to reach the container on: the host
// binding with useBindPortIP when one has a specific IP, else the
// container's network address and port.
func (b *builder) address(c containerInfo, port string, self map[string]bool) (string, string, *serverError) {
	src := c.source()
	if port == "" {
		if len(c.Ports) == 0 {
			return "", "", &serverError{src, "port is missing: the container exposes no port; add a label " + b.s.prefixes[len(b.s.prefixes)-1] + ".http.services.<name>.loadbalancer.server.port"}
		}
		port = strconv.Itoa(c.Ports[0].Port) // lowest, numerically (case 012)
	}
	if c.HostAddress != "" {
		return b.remoteAddress(c, port)
	}
	if b.s.useBindPortIP {
		for _, p := range c.Ports {
			if strconv.Itoa(p.Port) != port || len(p.Bindings) == 0 {
				continue
			}
			bd := p.Bindings[0]
			if bd.HostIP != "" && bd.HostIP != "0.0.0.0" && bd.HostIP != "::" {
				return bd.HostIP, bd.HostPort, nil
			}
			b.add(providers.SeverityWarning, src, fmt.Sprintf("useBindPortIP: port %s is published on %q, which names no single address; using the container's own address", port, bd.HostIP))
			break
		}
	}
	ip, err := b.ip(c, self)
	if err != nil {
		return "", "", err
	}
	return ip, port, nil
}

// ip chooses the container's address: the network named by the
// <prefix>.docker.network label, else by the provider's network option; for
// network mode host, the Docker host's address; else the first network (by
// name) that Gantry's own container shares; else the first network by name.
// Traefik takes "the first network Docker returns", which is random when a
// container has several. It returns "" and an error when no network has an
// address yet (case 015: the route appears on the network connect event).
func (b *builder) ip(c containerInfo, self map[string]bool) (string, *serverError) {
	src := c.source()
	want := b.s.network
	if v, ok := providerKey(c, b.s.prefixes, "docker.network"); ok {
		want = v
	}
	nets := slices.Clone(c.Networks)
	slices.SortFunc(nets, func(x, y netInfo) int { return strings.Compare(x.Name, y.Name) })
	if c.NetworkMode == "host" {
		if b.s.hostIP != "" {
			return b.s.hostIP, nil
		}
		return "127.0.0.1", nil
	}
	if want != "" {
		for _, n := range nets {
			if n.Name == want && n.IP != "" {
				return n.IP, nil
			}
		}
	}
	pick := func() (netInfo, bool) {
		for _, n := range nets {
			if self[n.Name] && n.IP != "" {
				return n, true
			}
		}
		for _, n := range nets {
			if n.IP != "" {
				return n, true
			}
		}
		return netInfo{}, false
	}
	n, ok := pick()
	if ok && want == "" {
		// Deterministic, unlike Traefik, but still a guess: say so when it
		// had to choose (case 013).
		var cands []string
		for _, x := range nets {
			if x.IP != "" && (self[x.Name] || !self[n.Name]) {
				cands = append(cands, x.Name)
			}
		}
		if len(cands) > 1 {
			b.add(providers.SeverityWarning, src, fmt.Sprintf("container is on networks %s and none is chosen: using %q (the first by name%s); set the label %s.docker.network or providers.docker.network",
				strings.Join(cands, ", "), n.Name, map[bool]string{true: " among those Gantry shares", false: ""}[self[n.Name]], b.s.prefixes[0]))
		}
	}
	switch {
	case !ok && want != "":
		return "", &serverError{src, fmt.Sprintf("unable to find the IP address of the container: it has no address on network %q (nor on any other) yet; it is added as soon as it has one", want)}
	case !ok:
		return "", &serverError{src, "unable to find the IP address of the container: no network with an address yet; it is added as soon as it has one"}
	case want != "":
		b.add(providers.SeverityWarning, src, fmt.Sprintf("network %q not found on the container (is the compose project prefix missing?); using network %q", want, n.Name))
	}
	return n.IP, nil
}

// remoteAddress is the address of a container on a remote engine (one of
// providers.docker.endpoints with a host address): its containers'
// networks are not reachable from Gantry, so the port must be published
// and the server is the binding's IP when it names one address, else the
// engine's host address, with the published port. A container in network
// mode host listens on the host itself: host address and port.
func (b *builder) remoteAddress(c containerInfo, port string) (string, string, *serverError) {
	if c.NetworkMode == "host" {
		return c.HostAddress, port, nil
	}
	for _, p := range c.Ports {
		if strconv.Itoa(p.Port) != port || p.Proto != "tcp" || len(p.Bindings) == 0 {
			continue
		}
		bd := p.Bindings[0]
		if bd.HostIP != "" && bd.HostIP != "0.0.0.0" && bd.HostIP != "::" && !net.ParseIP(bd.HostIP).IsLoopback() {
			return bd.HostIP, bd.HostPort, nil
		}
		return c.HostAddress, bd.HostPort, nil
	}
	return "", "", &serverError{c.source(), fmt.Sprintf("port %s is not published: containers of endpoint %s (a remote engine) are reached on %s through published ports", port, c.Endpoint, c.HostAddress)}
}
