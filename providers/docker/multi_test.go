package docker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/docker/engineapi"
)

// flakyAPI is a fakeAPI whose engine can go down (Ping fails, the event
// stream breaks) and come back.
type flakyAPI struct {
	*fakeAPI
	mu   sync.Mutex
	down bool
}

func (f *flakyAPI) Ping(ctx context.Context) (engineapi.Ping, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return engineapi.Ping{}, errors.New("connection refused")
	}
	return engineapi.Ping{}, nil
}

func (f *flakyAPI) setDown(d bool) {
	f.mu.Lock()
	f.down = d
	f.mu.Unlock()
	if d {
		f.errs <- errors.New("unexpected EOF")
	}
}

func newEngine(name, host string, f *flakyAPI) *engine {
	return &engine{name: name, endpoint: "fake://" + name, hostAddress: host, newClient: func() (dockerAPI, error) { return f, nil }}
}

func published(id, name, ip, hostPort string) engineapi.Container {
	c := inspected(id, name, ip)
	c.NetworkSettings.Ports = map[string][]engineapi.PortBinding{"80/tcp": {{HostIP: "0.0.0.0", HostPort: hostPort}}}
	return c
}

// Two engines in one provider: equal container names do not collide (the
// names Gantry derives are qualified by endpoint), a label-named service
// gathers the servers of both, a remote engine's containers are reached on
// its host address and published port; an engine going down keeps its last
// containers and is a problem while the other keeps updating; back, the
// problem goes.
func TestRunSeveralEngines(t *testing.T) {
	engineMinBackoff, engineMaxBackoff = 10*time.Millisecond, 50*time.Millisecond
	a := &flakyAPI{fakeAPI: &fakeAPI{running: []engineapi.Container{published("a1", "web", "192.0.2.1", "8080")},
		evs: make(chan engineapi.Event), errs: make(chan error, 1)}}
	b := &flakyAPI{fakeAPI: &fakeAPI{running: []engineapi.Container{published("b1", "web", "10.9.9.9", "8081")},
		evs: make(chan engineapi.Event), errs: make(chan error, 1)}}
	p, err := New(static.Docker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.endpoints = []*engine{newEngine("a", "", a), newEngine("b", "198.51.100.2", b)}
	ctx, cancel := context.WithCancel(context.Background())
	snaps := make(chan providers.Snapshot, 100)
	done := make(chan error)
	go func() { done <- p.Run(ctx, func(s providers.Snapshot) { snaps <- s }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	await := func(what string, ok func(providers.Snapshot) bool) providers.Snapshot {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case s := <-snaps:
				if ok(s) {
					return s
				}
			case <-deadline:
				t.Fatalf("no snapshot with %s", what)
			}
		}
	}
	servers := func(s providers.Snapshot) []string {
		var out []string
		if svc := s.Config.HTTP.Services["s"]; svc != nil && svc.LoadBalancer != nil {
			for _, sv := range svc.LoadBalancer.Servers {
				out = append(out, sv.URL)
			}
		}
		return out
	}
	s := await("both engines", func(s providers.Snapshot) bool { return len(servers(s)) == 2 })
	if got := strings.Join(servers(s), " "); !strings.Contains(got, "http://192.0.2.1:80") || !strings.Contains(got, "http://198.51.100.2:8081") {
		t.Fatalf("servers %q: want a's container address and b's host address with the published port", got)
	}
	if s.Config.HTTP.Routers["web-a"] == nil || s.Config.HTTP.Routers["web-b"] == nil {
		t.Fatalf("routers %v: want web-a and web-b", keys(s.Config.HTTP.Routers))
	}
	if r := s.Config.HTTP.Routers["web-b"].Rule; r != "Host(`web-b`)" {
		t.Fatalf("web-b rule %q", r)
	}

	// b down: its container stays, a problem names it.
	b.setDown(true)
	s = await("b's problem", func(s providers.Snapshot) bool { return hasSource(s, "docker endpoint b") })
	if len(servers(s)) != 2 {
		t.Fatalf("b down: servers %v, want b's last container kept", servers(s))
	}
	// a keeps updating while b is down.
	a.fakeAPI.mu.Lock()
	a.running = append(a.running, published("a2", "api", "192.0.2.2", "8082"))
	a.fakeAPI.mu.Unlock()
	a.evs <- engineapi.Event{Type: "container", Action: "start"}
	s = await("a's new container", func(s providers.Snapshot) bool { return len(servers(s)) == 3 })
	if !hasSource(s, "docker endpoint b") || s.Config.HTTP.Routers["api-a"] == nil {
		t.Fatalf("want api-a routed and b still a problem; routers %v problems %v", keys(s.Config.HTTP.Routers), s.Problems)
	}
	// b back: the problem goes.
	b.setDown(false)
	await("b recovered", func(s providers.Snapshot) bool { return !hasSource(s, "docker endpoint b") && len(servers(s)) == 3 })
}

func hasSource(s providers.Snapshot, src string) bool {
	for _, p := range s.Problems {
		if p.Source == src {
			return true
		}
	}
	return false
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A remote engine's container without a published port is a problem
// naming the rule, not a server on an unreachable address.
func TestRemoteEngineNeedsPublishedPort(t *testing.T) {
	c := fromInspect(inspected("b1", "web", "10.9.9.9"))
	c.Endpoint, c.HostAddress = "b", "198.51.100.2"
	s := build([]containerInfo{c}, baseSettings(t))
	if svc := s.Config.HTTP.Services["s"]; svc != nil {
		t.Fatalf("service s built: %+v", svc.LoadBalancer)
	}
	found := false
	for _, p := range s.Problems {
		if strings.Contains(p.Message, "port 80 is not published") && strings.Contains(p.Source, "on endpoint b") {
			found = true
		}
	}
	if !found {
		t.Fatalf("problems %v lack the published-port rule", s.Problems)
	}
}

func baseSettings(t *testing.T) settings {
	t.Helper()
	p, err := New(static.Docker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p.base
}

// Bad endpoints are refused naming the option.
func TestEndpointsRefused(t *testing.T) {
	for _, c := range []struct {
		opts static.Docker
		want string
	}{
		{static.Docker{Endpoint: "unix:///x", Endpoints: []static.DockerEndpoint{{Name: "a", Endpoint: "unix:///a"}}}, "set endpoint or endpoints, not both"},
		{static.Docker{Endpoints: []static.DockerEndpoint{{Name: "a b", Endpoint: "unix:///a"}}}, `endpoints[0].name "a b"`},
		{static.Docker{Endpoints: []static.DockerEndpoint{{Name: "a", Endpoint: "unix:///a"}, {Name: "a", Endpoint: "unix:///b"}}}, `endpoints[1].name "a": used twice`},
		{static.Docker{Endpoints: []static.DockerEndpoint{{Name: "a"}}}, "endpoints[0].endpoint: empty"},
		{static.Docker{Endpoints: []static.DockerEndpoint{{Name: "a", Endpoint: "npipe:////./pipe/docker"}}}, `endpoints[0].endpoint "npipe:////./pipe/docker": docker host "npipe:////./pipe/docker": scheme "npipe" not supported`},
		{static.Docker{Endpoint: "/var/run/docker.sock"}, `docker: endpoint: docker host "/var/run/docker.sock": want unix:///path/to/socket`},
	} {
		if _, err := New(c.opts, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %+v: got %v, want %q", c.opts.Endpoint, c.opts.Endpoints, err, c.want)
		}
	}
}

// A remote engine's published ports are on its host: for tcp:// and
// ssh:// endpoints the host of the endpoint, for unix:// none.
func TestEngineHostAddress(t *testing.T) {
	engines, err := newEngines(static.Docker{Endpoints: []static.DockerEndpoint{
		{Name: "local", Endpoint: "unix:///var/run/docker.sock"},
		{Name: "tcp", Endpoint: "tcp://198.51.100.7:2376"},
		{Name: "ssh", Endpoint: "ssh://deploy@docker-b.example:2222"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"local": "", "tcp": "198.51.100.7", "ssh": "docker-b.example"}
	for _, e := range engines {
		if e.hostAddress != want[e.name] {
			t.Errorf("engine %s: host address %q, want %q", e.name, e.hostAddress, want[e.name])
		}
	}
}
