package consul

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// e2eTimeout bounds how long a change in Consul may take to be routed by
// the gantry binary (blocking query + debounce + compile + swap).
const e2eTimeout = 60 * time.Second

// startGantry starts the gantry binary with both Consul providers pointed at
// a and returns it with the address of its web entrypoint.
func startGantry(t *testing.T, a *agent) (*harness.Gantry, string) {
	t.Helper()
	web := harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: %q
  traefik:
    address: %q
api:
  insecure: true
providers:
  providersThrottleDuration: 50ms
  consulCatalog:
    exposedByDefault: false
    endpoint:
      address: %q
      endpointWaitTime: 5s
  consul:
    endpoints: [%q]
    rootKey: traefik
log:
  level: DEBUG
`, web, harness.FreeAddr(t), a.Addr, a.Addr))
	return g, web
}

// outage reads /api/problems and /api/providers and reports whether both
// Consul providers show an outage: each state "down" and a problem
// "unreachable" naming its source ("consul catalog", "consul kv traefik/").
func outage(t *testing.T, g *harness.Gantry) (bool, string) {
	t.Helper()
	var probs []struct{ Provider, Source, Message string }
	var provs []struct{ Name, State string }
	for path, v := range map[string]any{"/api/problems": &probs, "/api/providers": &provs} {
		r, err := harness.Get(g.URL(t, "traefik", path))
		if err != nil || r.StatusCode != 200 {
			return false, fmt.Sprintf("%s: %v %v", path, err, r)
		}
		if err := json.Unmarshal([]byte(r.Body), v); err != nil {
			return false, err.Error()
		}
	}
	sources, states := map[string]bool{}, map[string]string{}
	for _, p := range probs {
		if strings.Contains(p.Message, "unreachable") {
			sources[p.Source] = true
		}
	}
	for _, p := range provs {
		states[p.Name] = p.State
	}
	down := sources["consul catalog"] && sources["consul kv traefik/"] && states["consulcatalog"] == "down" && states["consul"] == "down"
	return down, fmt.Sprintf("problems %+v, providers %+v", probs, provs)
}

// hostPort splits a whoami address into host and numeric port.
func hostPort(t *testing.T, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return h, n
}

// registerWhoami registers whoami at addr as instance id of service name.
func registerWhoami(t *testing.T, a *agent, id, name, addr string, tags ...string) {
	t.Helper()
	h, p := hostPort(t, addr)
	a.register(t, registerOpts{id: id, name: name, addr: h, port: p, tags: tags, ttl: true})
}

// names sends n requests and counts answers per whoami name ("" for
// non-200 answers, keyed by status).
func names(t *testing.T, url, host string, n int) map[string]int {
	t.Helper()
	out := map[string]int{}
	for range n {
		r, err := harness.Get(url, harness.Host(host))
		if err != nil {
			out["error"]++
			continue
		}
		if r.StatusCode != 200 {
			out[strconv.Itoa(r.StatusCode)]++
			continue
		}
		name := "?"
		for line := range strings.SplitSeq(r.Body, "\n") {
			if v, ok := strings.CutPrefix(line, "Name: "); ok {
				name = strings.TrimSpace(v)
			}
		}
		out[name]++
	}
	return out
}

// tryNames polls until n requests in a row are spread exactly over want
// (each name in want answers at least once, nothing else answers).
func tryNames(t *testing.T, url, host string, want ...string) {
	t.Helper()
	harness.Try(t, e2eTimeout, func() error {
		got := names(t, url, host, 4*len(want))
		for _, w := range want {
			if got[w] == 0 {
				return fmt.Errorf("host %s: got %v, want answers from exactly %v", host, got, want)
			}
		}
		if len(got) != len(want) {
			return fmt.Errorf("host %s: got %v, want answers from exactly %v", host, got, want)
		}
		return nil
	})
}

// TestEndToEnd drives a real agent and checks what clients get through the
// real gantry binary: register → routed; second instance → both serve;
// health critical → removed; deregister → 404; KV put/delete → router
// appears/disappears; agent stopped → last config still served; agent back
// and services re-registered → changes flow again.
func TestEndToEnd(t *testing.T) {
	a := startAgent(t)
	w1 := harness.StartWhoami(t, "w1")
	w2 := harness.StartWhoami(t, "w2")
	w3 := harness.StartWhoami(t, "w3")
	g, web := startGantry(t, a)
	url := "http://" + web + "/"
	tags := []string{"traefik.enable=true", "traefik.http.routers.api.rule=Host(`api.example.com`)"}

	harness.TryGet(t, e2eTimeout, url, harness.Host("api.example.com"), harness.StatusIs(404))

	registerWhoami(t, a, "api-1", "api", w1, tags...)
	harness.TryGet(t, e2eTimeout, url, harness.Host("api.example.com"), harness.StatusIs(200), harness.BodyContains("Name: w1"))

	registerWhoami(t, a, "api-2", "api", w2, tags...)
	tryNames(t, url, "api.example.com", "w1", "w2")

	a.setStatus(t, "api-1", "critical")
	tryNames(t, url, "api.example.com", "w2")

	a.setStatus(t, "api-2", "warning")
	tryNames(t, url, "api.example.com", "w2")

	a.deregister(t, "api-2")
	harness.TryGet(t, e2eTimeout, url, harness.Host("api.example.com"), harness.StatusIs(404))
	a.deregister(t, "api-1")

	a.put(t, map[string]string{
		"traefik/http/routers/kv/rule":                        "Host(`kv.example.com`)",
		"traefik/http/routers/kv/service":                     "kv",
		"traefik/http/services/kv/loadBalancer/servers/0/url": "http://" + w3,
	})
	harness.TryGet(t, e2eTimeout, url, harness.Host("kv.example.com"), harness.StatusIs(200), harness.BodyContains("Name: w3"))
	a.deleteTree(t, "traefik/http/routers/kv")
	harness.TryGet(t, e2eTimeout, url, harness.Host("kv.example.com"), harness.StatusIs(404))
	a.put(t, map[string]string{
		"traefik/http/routers/kv/rule":    "Host(`kv.example.com`)",
		"traefik/http/routers/kv/service": "kv",
	})
	harness.TryGet(t, e2eTimeout, url, harness.Host("kv.example.com"), harness.StatusIs(200), harness.BodyContains("Name: w3"))

	// Agent stopped (case 019): both providers fail, the last configuration
	// keeps serving.
	registerWhoami(t, a, "api-1", "api", w1, tags...)
	tryNames(t, url, "api.example.com", "w1")
	a.Stop(t)
	harness.Try(t, e2eTimeout, func() error {
		if g.CountOutput("consul request failed") < 2 {
			return fmt.Errorf("gantry has not logged both providers failing yet")
		}
		return nil
	})
	tryNames(t, url, "api.example.com", "w1")
	tryNames(t, url, "kv.example.com", "w3")
	// The outage is visible (issue 23): a problem per provider naming its
	// source, state "down".
	harness.Try(t, e2eTimeout, func() error {
		if down, got := outage(t, g); !down {
			return fmt.Errorf("outage not shown: %s", got)
		}
		return nil
	})

	// Agent restarted (empty, as a dev agent is) and services re-registered
	// elsewhere: changes flow again without restarting gantry.
	a.Start(t)
	registerWhoami(t, a, "api-1", "api", w2, tags...)
	tryNames(t, url, "api.example.com", "w2")
	harness.TryGet(t, e2eTimeout, url, harness.Host("kv.example.com"), harness.StatusIs(404))
	// Recovered: no problem, state ok.
	harness.Try(t, e2eTimeout, func() error {
		down, got := outage(t, g)
		if down || strings.Contains(got, "unreachable") || strings.Contains(got, `State:down`) {
			return fmt.Errorf("outage still shown after recovery: %s", got)
		}
		return nil
	})
}

// TestEndToEndConsulDownAtStart is case 019 S1 through the binary: gantry
// starts while Consul is down; the file provider's route works from the
// start, the Consul route answers 404, and once Consul is up with the
// service registered it is routed without a restart.
func TestEndToEndConsulDownAtStart(t *testing.T) {
	a := startAgent(t)
	a.Stop(t)
	w1 := harness.StartWhoami(t, "w1")
	w2 := harness.StartWhoami(t, "w2")
	dir := t.TempDir()
	harness.WriteFile(t, dir, "static.yml", fmt.Sprintf(`
http:
  routers:
    static:
      rule: Host(`+"`static.example.com`"+`)
      service: static
  services:
    static:
      loadBalancer:
        servers:
          - url: http://%s
`, w1))
	web := harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: %q
providers:
  providersThrottleDuration: 50ms
  file:
    directory: %q
  consulCatalog:
    exposedByDefault: false
    endpoint:
      address: %q
      endpointWaitTime: 5s
`, web, dir, a.Addr))
	url := "http://" + web + "/"
	harness.TryGet(t, e2eTimeout, url, harness.Host("static.example.com"), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	g.WaitOutput(t, e2eTimeout, "consul request failed")
	harness.TryGet(t, e2eTimeout, url, harness.Host("api.example.com"), harness.StatusIs(404))

	a.Start(t)
	registerWhoami(t, a, "api-1", "api", w2, "traefik.enable=true", "traefik.http.routers.api.rule=Host(`api.example.com`)")
	tryNames(t, url, "api.example.com", "w2")
	tryNames(t, url, "static.example.com", "w1")
}
