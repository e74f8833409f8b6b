package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// setHealth makes a whoami answer code on /health.
func setHealth(t *testing.T, w *harness.Whoami, code int) {
	t.Helper()
	resp, err := http.Post(w.URL()+"/health", "text/plain", strings.NewReader(fmt.Sprint(code)))
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("set health of %s: %d", w.Name, resp.StatusCode)
	}
}

// names sends n requests and returns how many each backend answered, and
// the statuses of the others.
func names(t *testing.T, url, host string, n int) (map[string]int, []int) {
	t.Helper()
	got := map[string]int{}
	var other []int
	for range n {
		r := get(t, url, harness.Host(host))
		if r.StatusCode != 200 {
			other = append(other, r.StatusCode)
			continue
		}
		got[parseEcho(r.Body).name]++
	}
	return got, other
}

// Case 032: active health checks. A server whose /health answers 503 leaves
// the rotation; 204 counts as healthy; one success brings a server back;
// with every server down the answer is 503 "no available server".
func TestActiveHealthCheck(t *testing.T) {
	w1 := harness.StartWhoamiProc(t, "h1")
	w2 := harness.StartWhoamiProc(t, "h2")
	p := startProxy(t, map[string]string{"web": "", "traefik": ""}, "api:\n  insecure: true\n", fmt.Sprintf(`
http:
  routers:
    app: {rule: "Host(`+"`app.test`"+`)", service: app}
  services:
    app:
      loadBalancer:
        healthCheck: {path: /health, interval: 100ms, timeout: 1s}
        servers:
          - url: http://%s
          - url: http://%s
`, w1.Addr, w2.Addr))
	url := p.URL(t, "web", "/")

	until := func(what string, ok func(map[string]int, []int) bool) {
		t.Helper()
		harness.Try(t, wait, func() error {
			got, other := names(t, url, "app.test", 10)
			if ok(got, other) {
				return nil
			}
			return fmt.Errorf("%s: 10 requests went to %v, other statuses %v", what, got, other)
		})
	}
	until("both in rotation", func(g map[string]int, o []int) bool { return g["h1"] > 0 && g["h2"] > 0 && len(o) == 0 })

	setHealth(t, w2, 503)
	until("h2 out of rotation", func(g map[string]int, o []int) bool { return g["h1"] == 10 })
	// The API shows it (issue 5503 in case 032: the status must follow the check).
	api := p.URL(t, "traefik", "/api/http/services/app@file")
	harness.TryGet(t, wait, api, harness.StatusIs(200),
		harness.BodyContains(fmt.Sprintf("%q:%q", "http://"+w2.Addr, "DOWN")),
		harness.BodyContains(fmt.Sprintf("%q:%q", "http://"+w1.Addr, "UP")))

	setHealth(t, w2, 204) // 2xx is healthy (issue 3081 in case 032)
	until("h2 back with 204", func(g map[string]int, o []int) bool { return g["h1"] > 0 && g["h2"] > 0 })
	harness.TryGet(t, wait, api, harness.BodyContains(fmt.Sprintf("%q:%q", "http://"+w2.Addr, "UP")))

	setHealth(t, w1, 404)
	setHealth(t, w2, 500)
	harness.TryGet(t, wait, url, harness.Host("app.test"), harness.StatusIs(503), harness.BodyContains("no available server"))

	setHealth(t, w1, 200)
	until("h1 back alone", func(g map[string]int, o []int) bool { return g["h1"] == 10 })
}

// Passive health checks: a server that stops answering leaves the rotation
// after maxFailedAttempts failures, so at most that many requests fail,
// and it comes back once it answers again after failureWindow.
func TestPassiveHealthCheck(t *testing.T) {
	w1 := harness.StartWhoamiProc(t, "p1")
	w2 := harness.StartWhoamiProc(t, "p2")
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    app: {rule: "Host(`+"`passive.test`"+`)", service: app}
  services:
    app:
      loadBalancer:
        passiveHealthCheck: {failureWindow: 1s, maxFailedAttempts: 1}
        servers:
          - url: http://%s
          - url: http://%s
`, w1.Addr, w2.Addr))
	url := p.URL(t, "web", "/")
	got, other := names(t, url, "passive.test", 10)
	if got["p1"] != 5 || got["p2"] != 5 || len(other) != 0 {
		t.Fatalf("before: %v, other statuses %v", got, other)
	}

	w2.Stop(t)
	got, other = names(t, url, "passive.test", 20)
	if len(other) > 1 || got["p1"] < 19 {
		t.Errorf("with p2 down: %v, other statuses %v; want at most 1 failure (maxFailedAttempts)", got, other)
	}

	harness.StartWhoamiProc(t, "p2", "--addr", w2.Addr) // back on the same address
	harness.Try(t, wait, func() error {
		got, other := names(t, url, "passive.test", 10)
		if got["p2"] > 0 && len(other) == 0 {
			return nil
		}
		return fmt.Errorf("p2 not back yet: %v, other statuses %v", got, other)
	})
}
