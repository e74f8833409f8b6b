package docker

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-proxy/gantry/providers/docker/engineapi"
)

func TestFromInspect(t *testing.T) {
	in := engineapi.Container{
		ID: "abc", Name: "/web-1",
		State: engineapi.State{Status: "running", Health: &engineapi.Health{
			Status: "unhealthy",
			Log: []*engineapi.HealthResult{
				{ExitCode: 0, Output: "ok"},
				{ExitCode: 1, Output: "503 Service\n Unavailable\n"},
			},
		}},
		NetworkSettings: engineapi.NetworkSettings{
			Ports: map[string][]engineapi.PortBinding{
				"443/tcp": {{HostIP: "127.0.0.1", HostPort: "8443"}},
			},
			Networks: map[string]*engineapi.Endpoint{
				"zeta":  {IPAddress: "192.0.2.2"},
				"alpha": {GlobalIPv6Address: "2001:db8::1"},
			},
		},
	}
	in.HostConfig.NetworkMode = "proxy"
	in.Config.Labels = map[string]string{"a": "b"}
	in.Config.ExposedPorts = map[string]struct{}{"8080/tcp": {}, "443/tcp": {}, "53/udp": {}}
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
