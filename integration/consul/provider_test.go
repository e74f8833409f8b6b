package consul

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/integration/harness"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/consul"
)

// changeTimeout bounds how long a change in Consul may take to show up in a
// snapshot. Blocking queries make it a round trip; the margin is for a
// loaded shared machine.
const changeTimeout = 60 * time.Second

// collector runs a provider and keeps what it publishes.
type collector struct {
	mu    sync.Mutex
	snaps []providers.Snapshot
	logs  *harness.SyncBuffer
	stop  func()
}

func logger() (*slog.Logger, *harness.SyncBuffer) {
	buf := &harness.SyncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// run starts p.Run in a goroutine; the cleanup cancels it and checks that
// Run returned nil.
func run(t *testing.T, p providers.Provider, logs *harness.SyncBuffer) *collector {
	t.Helper()
	c := &collector{logs: logs}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- p.Run(ctx, func(s providers.Snapshot) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.snaps = append(c.snaps, s)
		})
	}()
	var once sync.Once
	c.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-errc:
				if err != nil {
					t.Errorf("Run returned %v, want nil", err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("Run did not return within 30s of cancel")
			}
		})
	}
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			t.Logf("provider log:\n%s", logs.String())
		}
	})
	return c
}

func (c *collector) last() (providers.Snapshot, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.snaps) == 0 {
		return providers.Snapshot{}, 0
	}
	return c.snaps[len(c.snaps)-1], len(c.snaps)
}

// await polls until check accepts the latest snapshot.
func (c *collector) await(t *testing.T, what string, check func(*config.Configuration) error) providers.Snapshot {
	t.Helper()
	var got providers.Snapshot
	harness.Try(t, changeTimeout, func() error {
		s, n := c.last()
		if n == 0 {
			return fmt.Errorf("%s: nothing published yet", what)
		}
		if err := check(s.Config); err != nil {
			return fmt.Errorf("%s: %w (problems: %v)", what, err, s.Problems)
		}
		got = s
		return nil
	})
	return got
}

// serversAre checks the server URLs of service name, in any order.
func serversAre(name string, want ...string) func(*config.Configuration) error {
	return func(c *config.Configuration) error {
		if c == nil {
			return fmt.Errorf("no configuration (a Down snapshot: the source is unreachable)")
		}
		var got []string
		if s := c.HTTP.Services[name]; s != nil && s.LoadBalancer != nil {
			for _, sv := range s.LoadBalancer.Servers {
				got = append(got, sv.URL)
			}
		}
		slices.Sort(got)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(got, want) {
			return fmt.Errorf("servers of %s: got %v, want %v", name, got, want)
		}
		return nil
	}
}

func routerIs(name, rule string) func(*config.Configuration) error {
	return func(c *config.Configuration) error {
		if c == nil {
			return fmt.Errorf("no configuration (a Down snapshot: the source is unreachable)")
		}
		r := c.HTTP.Routers[name]
		switch {
		case r == nil && rule == "":
			return nil
		case r == nil:
			return fmt.Errorf("router %s missing", name)
		case rule == "":
			return fmt.Errorf("router %s present (%s), want it gone", name, r.Rule)
		case r.Rule != rule:
			return fmt.Errorf("router %s rule: got %s, want %s", name, r.Rule, rule)
		}
		return nil
	}
}

func both(fs ...func(*config.Configuration) error) func(*config.Configuration) error {
	return func(c *config.Configuration) error {
		for _, f := range fs {
			if err := f(c); err != nil {
				return err
			}
		}
		return nil
	}
}

func catalogOpts(a *agent) static.ConsulCatalog {
	f := false
	return static.ConsulCatalog{
		Endpoint:         &static.ConsulEndpoint{Address: a.Addr, EndpointWaitTime: config.Duration(5 * time.Second)},
		ExposedByDefault: &f,
	}
}

var apiTags = []string{"traefik.enable=true", "traefik.http.routers.api.rule=Host(`api.example.com`)"}

// TestCatalogFollowsAgent registers, scales, fails and deregisters a
// service in a real agent and checks each snapshot (cases 017 and 018).
func TestCatalogFollowsAgent(t *testing.T) {
	a := startAgent(t)
	log, logs := logger()
	p, err := consul.NewCatalog(catalogOpts(a), log)
	if err != nil {
		t.Fatal(err)
	}
	c := run(t, p, logs)
	c.await(t, "empty catalog", routerIs("api", ""))

	a.register(t, registerOpts{id: "api-1", name: "api", addr: "127.0.0.1", port: 9001, tags: apiTags, ttl: true})
	c.await(t, "first instance", both(routerIs("api", "Host(`api.example.com`)"), serversAre("api", "http://127.0.0.1:9001")))

	a.register(t, registerOpts{id: "api-2", name: "api", addr: "127.0.0.1", port: 9002, tags: apiTags, ttl: true})
	c.await(t, "second instance", serversAre("api", "http://127.0.0.1:9001", "http://127.0.0.1:9002"))

	a.setStatus(t, "api-2", "warning")
	c.await(t, "warning still routed", serversAre("api", "http://127.0.0.1:9001", "http://127.0.0.1:9002"))

	a.setStatus(t, "api-1", "critical")
	s := c.await(t, "critical removed", serversAre("api", "http://127.0.0.1:9002"))
	if !slices.ContainsFunc(s.Problems, func(p providers.Problem) bool {
		return p.Severity == providers.SeverityPending && strings.Contains(p.Source, "instance gantry-test/api-1 health")
	}) {
		t.Errorf("no pending problem for api-1 in %v", s.Problems)
	}

	a.setStatus(t, "api-1", "passing")
	c.await(t, "recovered", serversAre("api", "http://127.0.0.1:9001", "http://127.0.0.1:9002"))

	// A node check counts for every instance on the node (case 017).
	if err := a.API.Agent().CheckRegister(&api.AgentCheckRegistration{ID: "node-ttl", Name: "node ttl",
		AgentServiceCheck: api.AgentServiceCheck{TTL: "10m", Status: api.HealthPassing}}); err != nil {
		t.Fatal(err)
	}
	if err := a.API.Agent().UpdateTTL("node-ttl", "node down", api.HealthCritical); err != nil {
		t.Fatal(err)
	}
	c.await(t, "node check critical", both(routerIs("api", ""), serversAre("api")))
	if err := a.API.Agent().UpdateTTL("node-ttl", "node up", api.HealthPassing); err != nil {
		t.Fatal(err)
	}
	c.await(t, "node check passing", serversAre("api", "http://127.0.0.1:9001", "http://127.0.0.1:9002"))

	// A service without the enable tag is not exposed (exposedByDefault false).
	a.register(t, registerOpts{id: "hidden-1", name: "hidden", addr: "127.0.0.1", port: 9009,
		tags: []string{"traefik.http.routers.hidden.rule=Host(`hidden.example.com`)"}})
	a.deregister(t, "api-1")
	s = c.await(t, "deregistered one", serversAre("api", "http://127.0.0.1:9002"))
	if _, ok := s.Config.HTTP.Routers["hidden"]; ok {
		t.Errorf("router hidden exposed without traefik.enable=true")
	}

	a.deregister(t, "api-2")
	c.await(t, "deregistered all", both(routerIs("api", ""), serversAre("api")))
}

// TestCatalogBadTag checks that a bad tag on a live service is a problem
// naming service, instance and tag, and disables only its router.
func TestCatalogBadTag(t *testing.T) {
	a := startAgent(t)
	log, logs := logger()
	p, err := consul.NewCatalog(catalogOpts(a), log)
	if err != nil {
		t.Fatal(err)
	}
	c := run(t, p, logs)
	a.register(t, registerOpts{id: "shop-1", name: "shop", addr: "127.0.0.1", port: 9100, tags: []string{
		"traefik.enable=true",
		"traefik.http.routers.shop.rule=Host(`shop.example.com`)",
		"traefik.http.routers.admin.rule=Host(`admin.example.com`)",
		"traefik.http.routers.admin.priority=high",
	}})
	s := c.await(t, "shop routed", both(routerIs("shop", "Host(`shop.example.com`)"), routerIs("admin", "")))
	want := "consul service shop instance gantry-test/shop-1 tag traefik.http.routers.admin.priority"
	if !slices.ContainsFunc(s.Problems, func(p providers.Problem) bool { return p.Source == want }) {
		t.Errorf("no problem with source %q in %v", want, s.Problems)
	}
}

// TestKVFollowsAgent puts and deletes a router in the KV store and checks
// the snapshots; a bad key is a problem naming it.
func TestKVFollowsAgent(t *testing.T) {
	a := startAgent(t)
	log, logs := logger()
	p, err := consul.NewKV(static.ConsulKV{Endpoints: []string{a.Addr}}, log)
	if err != nil {
		t.Fatal(err)
	}
	c := run(t, p, logs)
	c.await(t, "empty store", routerIs("kv", ""))

	a.put(t, map[string]string{
		"traefik/http/routers/kv/rule":                        "Host(`kv.example.com`)",
		"traefik/http/routers/kv/service":                     "kv",
		"traefik/http/routers/kv/entryPoints/0":               "web",
		"traefik/http/services/kv/loadBalancer/servers/0/url": "http://127.0.0.1:9200",
		"traefik/http/services/kv/loadBalancer/servers/1/url": "http://127.0.0.1:9201",
		"traefik/http/routers/broken/rule":                    "Host(`broken.example.com`)",
		"traefik/http/routers/broken/priority":                "high",
		"unrelated/http/routers/other/rule":                   "Host(`other.example.com`)",
	})
	s := c.await(t, "router put", both(routerIs("kv", "Host(`kv.example.com`)"),
		serversAre("kv", "http://127.0.0.1:9200", "http://127.0.0.1:9201"), routerIs("other", ""), routerIs("broken", "")))
	if !slices.ContainsFunc(s.Problems, func(p providers.Problem) bool {
		return p.Source == "consul key traefik/http/routers/broken/priority"
	}) {
		t.Errorf("no problem naming traefik/http/routers/broken/priority in %v", s.Problems)
	}

	a.deleteTree(t, "traefik/http/routers/kv")
	c.await(t, "router deleted", both(routerIs("kv", ""), serversAre("kv", "http://127.0.0.1:9200", "http://127.0.0.1:9201")))
	a.deleteTree(t, "traefik/")
	c.await(t, "tree deleted", serversAre("kv"))
}

// TestAgentOutage (case 019): while the agent is down the provider keeps
// its last snapshot and publishes nothing; when an agent comes back on the
// same address with the instance moved, the provider re-reads everything
// and publishes the new server without a restart. A provider started while
// Consul is down routes as soon as it comes up.
func TestAgentOutage(t *testing.T) {
	a := startAgent(t)
	log, logs := logger()
	p, err := consul.NewCatalog(catalogOpts(a), log)
	if err != nil {
		t.Fatal(err)
	}
	c := run(t, p, logs)
	a.register(t, registerOpts{id: "api-1", name: "api", addr: "127.0.0.1", port: 9301, tags: apiTags})
	c.await(t, "before outage", serversAre("api", "http://127.0.0.1:9301"))
	_, n := c.last()

	a.Stop(t)
	// Let the provider retry a few times while the agent is down.
	harness.Try(t, changeTimeout, func() error {
		if k := strings.Count(logs.String(), "consul request failed"); k < 4 {
			return fmt.Errorf("%d failed requests logged, want at least 4", k)
		}
		return nil
	})
	// While Consul is down the provider publishes one Down snapshot (no
	// configuration: the aggregator keeps the last one) whose problem
	// names the outage (issue 23), and nothing else.
	c.mu.Lock()
	during := slices.Clone(c.snaps[n:])
	c.mu.Unlock()
	if len(during) != 1 || during[0].Down == "" || during[0].Config != nil || len(during[0].Problems) != 1 ||
		!strings.Contains(during[0].Problems[0].Message, "unreachable") {
		t.Fatalf("published while Consul was down: %+v; want one Down snapshot with its problem", during)
	}

	// S1: a second provider starts while Consul is down.
	log2, logs2 := logger()
	p2, err := consul.NewCatalog(catalogOpts(a), log2)
	if err != nil {
		t.Fatal(err)
	}
	c2 := run(t, p2, logs2)

	a.Start(t)
	a.register(t, registerOpts{id: "api-1", name: "api", addr: "127.0.0.1", port: 9302, tags: apiTags})
	c.await(t, "after recovery", serversAre("api", "http://127.0.0.1:9302"))
	c2.await(t, "started during outage", serversAre("api", "http://127.0.0.1:9302"))
	if !strings.Contains(logs.String(), "consul reachable again") {
		t.Errorf("recovery not logged")
	}
}

// TestKVAgentOutage: the KV provider keeps its last snapshot while the agent
// is down and follows the new store after it comes back.
func TestKVAgentOutage(t *testing.T) {
	a := startAgent(t)
	log, logs := logger()
	p, err := consul.NewKV(static.ConsulKV{Endpoints: []string{a.Addr}}, log)
	if err != nil {
		t.Fatal(err)
	}
	c := run(t, p, logs)
	a.put(t, map[string]string{"traefik/http/routers/kv/rule": "Host(`kv.example.com`)"})
	c.await(t, "before outage", routerIs("kv", "Host(`kv.example.com`)"))
	_, n := c.last()
	a.Stop(t)
	harness.Try(t, changeTimeout, func() error {
		if strings.Count(logs.String(), "consul request failed") < 3 {
			return fmt.Errorf("outage not noticed yet")
		}
		return nil
	})
	// The router is not lost: the provider publishes only one Down
	// snapshot (no configuration: the aggregator keeps the last one, with
	// router kv) and its problem.
	c.mu.Lock()
	during := slices.Clone(c.snaps[n:])
	c.mu.Unlock()
	if len(during) != 1 || during[0].Down == "" || during[0].Config != nil || len(during[0].Problems) != 1 {
		t.Fatalf("published while Consul was down: %+v; want one Down snapshot with its problem", during)
	}
	a.Start(t)
	a.put(t, map[string]string{"traefik/http/routers/kv/rule": "Host(`kv2.example.com`)"})
	c.await(t, "after recovery", routerIs("kv", "Host(`kv2.example.com`)"))
}

// TestCatalogManyServices registers 250 services, more than the agent's
// default 200 connections per client: the provider must bound its queries
// (no request fails), route them all, follow a health change on a service
// whose watch takes turns, and follow the deregistration of half of them.
func TestCatalogManyServices(t *testing.T) {
	const n = 250
	a := startAgent(t)
	log, logs := logger()
	p, err := consul.NewCatalog(catalogOpts(a), log)
	if err != nil {
		t.Fatal(err)
	}
	c := run(t, p, logs)
	for i := range n {
		id := fmt.Sprintf("svc-%03d", i)
		a.register(t, registerOpts{id: id, name: id, addr: "127.0.0.1", port: 10000 + i, tags: []string{"traefik.enable=true"}, ttl: true})
	}
	routers := func(want int) func(*config.Configuration) error {
		return func(cfg *config.Configuration) error {
			if got := len(cfg.HTTP.Routers); got != want {
				return fmt.Errorf("got %d routers, want %d", got, want)
			}
			return nil
		}
	}
	c.await(t, "all registered", routers(n))
	last := fmt.Sprintf("svc-%03d", n-1)
	a.setStatus(t, last, "critical")
	c.await(t, "last service critical", both(routers(n-1), routerIs(last, "")))
	a.setStatus(t, last, "passing")
	c.await(t, "last service passing", routers(n))
	if strings.Contains(logs.String(), "consul request failed") {
		t.Errorf("requests failed with %d services:\n%s", n, logs.String())
	}
	for i := 0; i < n; i += 2 {
		a.deregister(t, fmt.Sprintf("svc-%03d", i))
	}
	s := c.await(t, "half deregistered", routers(n/2))
	if r := s.Config.HTTP.Routers["svc-001"]; r == nil || r.Rule != "Host(`svc-001`)" {
		t.Errorf("router svc-001: got %+v, want the default rule Host(`svc-001`)", r)
	}
}
