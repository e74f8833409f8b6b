package docker

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/providers/docker/engineapi"
)

// containerInfo is what build needs to know about one container: the parts
// of a Docker inspect response that shape configuration.
type containerInfo struct {
	ID     string            `json:"id"`
	Name   string            `json:"name"` // without the leading "/"
	Labels map[string]string `json:"labels,omitempty"`
	// State is Docker's state: created, running, paused, restarting,
	// removing, exited or dead.
	State string `json:"state"`
	// Health is "" (no health check), starting, healthy or unhealthy.
	Health string `json:"health,omitempty"`
	// HealthLog is the output of the last health check, trimmed.
	HealthLog string `json:"healthLog,omitempty"`
	// NetworkMode is the HostConfig network mode: bridge, host, none,
	// container:<id> or a network name.
	NetworkMode string `json:"networkMode,omitempty"`
	// Networks are the networks the container is attached to, sorted by
	// name; for network_mode container:<id>, those of that container.
	Networks []netInfo `json:"networks,omitempty"`
	// Ports are the exposed ports, sorted by number then protocol.
	Ports []portInfo `json:"ports,omitempty"`
	// Endpoint is the name of the engine of providers.docker.endpoints the
	// container runs on ("" with the single endpoint option).
	Endpoint string `json:"endpoint,omitempty"`
	// HostAddress is that engine's host address for published ports ("" for
	// a local engine).
	HostAddress string `json:"hostAddress,omitempty"`
}

// source names the container in problems: "container web", or "container
// web on endpoint b" with several engines.
func (c containerInfo) source() string {
	if c.Endpoint == "" {
		return "container " + c.Name
	}
	return "container " + c.Name + " on endpoint " + c.Endpoint
}

// netInfo is one network attachment.
type netInfo struct {
	Name string `json:"name"`
	IP   string `json:"ip,omitempty"` // IPv4, else global IPv6; "" while not connected
}

// portInfo is one exposed port and its host bindings.
type portInfo struct {
	Port     int       `json:"port"`
	Proto    string    `json:"proto"` // tcp, udp, sctp
	Bindings []binding `json:"bindings,omitempty"`
}

// binding is a published host address of a port.
type binding struct {
	HostIP   string `json:"hostIP,omitempty"`
	HostPort string `json:"hostPort"`
}

// fromInspect extracts a containerInfo from an inspect response. Networks
// of a container in network_mode container:<id> are filled in by the caller.
func fromInspect(in engineapi.Container) containerInfo {
	c := containerInfo{
		ID: in.ID, Name: strings.TrimPrefix(in.Name, "/"), Labels: in.Config.Labels,
		State: in.State.Status, NetworkMode: in.HostConfig.NetworkMode,
	}
	if h := in.State.Health; h != nil {
		c.Health = h.Status
		if n := len(h.Log); n > 0 && h.Log[n-1] != nil {
			c.HealthLog = lastCheck(h.Log[n-1].ExitCode, h.Log[n-1].Output)
		}
	}
	ports := map[string]*portInfo{}
	addPort := func(spec string) *portInfo {
		if p, ok := ports[spec]; ok {
			return p
		}
		num, proto, _ := strings.Cut(spec, "/")
		n, err := strconv.Atoi(num)
		if err != nil {
			return nil
		}
		if proto == "" {
			proto = "tcp"
		}
		p := &portInfo{Port: n, Proto: proto}
		ports[spec] = p
		return p
	}
	for p := range in.Config.ExposedPorts {
		addPort(p)
	}
	for p, bs := range in.NetworkSettings.Ports {
		pi := addPort(p)
		if pi == nil {
			continue
		}
		for _, b := range bs {
			pi.Bindings = append(pi.Bindings, binding{HostIP: b.HostIP, HostPort: b.HostPort})
		}
	}
	c.Networks = networksOf(in.NetworkSettings.Networks)
	for _, p := range ports {
		c.Ports = append(c.Ports, *p)
	}
	slices.SortFunc(c.Ports, func(a, b portInfo) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), strings.Compare(a.Proto, b.Proto))
	})
	return c
}

// networksOf lists a container's attached networks, sorted by name.
func networksOf(nets map[string]*engineapi.Endpoint) []netInfo {
	var out []netInfo
	for name, ep := range nets {
		if ep == nil {
			continue
		}
		ip := ep.IPAddress
		if ip == "" {
			ip = ep.GlobalIPv6Address
		}
		out = append(out, netInfo{Name: name, IP: ip})
	}
	slices.SortFunc(out, func(a, b netInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// lastCheck renders a health check result for a pending problem.
func lastCheck(exit int, output string) string {
	output = strings.Join(strings.Fields(output), " ")
	if len(output) > 200 {
		output = output[:200] + "…"
	}
	if output == "" {
		return "exit " + strconv.Itoa(exit)
	}
	return "exit " + strconv.Itoa(exit) + ": " + output
}
