package docker

import (
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/go-connections/nat"
	"github.com/google/go-cmp/cmp"
)

func TestFromInspect(t *testing.T) {
	in := container.InspectResponse{
		ContainerJSONBase: &container.ContainerJSONBase{
			ID: "abc", Name: "/web-1",
			State: &container.State{Status: container.StateRunning, Health: &container.Health{
				Status: container.Unhealthy,
				Log: []*container.HealthcheckResult{
					{ExitCode: 0, Output: "ok"},
					{ExitCode: 1, Output: "503 Service\n Unavailable\n"},
				},
			}},
			HostConfig: &container.HostConfig{NetworkMode: "proxy"},
		},
		Config: &container.Config{
			Labels:       map[string]string{"a": "b"},
			ExposedPorts: nat.PortSet{"8080/tcp": {}, "443/tcp": {}, "53/udp": {}},
		},
		NetworkSettings: &container.NetworkSettings{
			NetworkSettingsBase: container.NetworkSettingsBase{Ports: nat.PortMap{
				"443/tcp": {{HostIP: "127.0.0.1", HostPort: "8443"}},
			}},
			Networks: map[string]*network.EndpointSettings{
				"zeta":  {IPAddress: "192.0.2.2"},
				"alpha": {GlobalIPv6Address: "2001:db8::1"},
			},
		},
	}
	want := containerInfo{
		ID: "abc", Name: "web-1", Labels: map[string]string{"a": "b"},
		State: "running", Health: "unhealthy", HealthLog: "exit 1: 503 Service Unavailable",
		NetworkMode: "proxy",
		Networks:    []netInfo{{Name: "alpha", IP: "2001:db8::1"}, {Name: "zeta", IP: "192.0.2.2"}},
		Ports: []portInfo{
			{Port: 53, Proto: "udp"},
			{Port: 443, Proto: "tcp", Bindings: []binding{{HostIP: "127.0.0.1", HostPort: "8443"}}},
			{Port: 8080, Proto: "tcp"},
		},
	}
	if d := cmp.Diff(want, fromInspect(in)); d != "" {
		t.Errorf("fromInspect (-want +got):\n%s", d)
	}
}
