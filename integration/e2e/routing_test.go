package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestRoutingByHostAndPath(t *testing.T) {
	w1 := harness.StartWhoami(t, "w1")
	w2 := harness.StartWhoami(t, "w2")
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    site:
      rule: Host(`+"`site.test`"+`)
      service: one
    site-api:
      rule: Host(`+"`site.test`"+`) && PathPrefix(`+"`/api`"+`)
      service: two
    other:
      rule: Host(`+"`other.test`"+`) || Path(`+"`/exact`"+`)
      service: two
  services:
    one:
      loadBalancer:
        servers: [{url: "http://%s"}]
    two:
      loadBalancer:
        servers: [{url: "http://%s"}]
`, w1, w2))
	web := p.URL(t, "web", "")
	tests := []struct {
		name, host, path string
		status           int
		backend          string
	}{
		{"host", "site.test", "/", 200, "w1"},
		{"host is case-insensitive", "SITE.test", "/x", 200, "w1"},
		{"longer rule wins", "site.test", "/api/users", 200, "w2"},
		{"prefix is a plain prefix", "site.test", "/apiary", 200, "w2"},
		{"other host", "other.test", "/", 200, "w2"},
		{"exact path on any host", "nowhere.test", "/exact", 200, "w2"},
		{"exact path only", "nowhere.test", "/exact/no", 404, ""},
		{"no route", "nowhere.test", "/", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, web+tt.path, harness.Host(tt.host))
			if r.StatusCode != tt.status {
				t.Fatalf("got status %d, want %d (%q)", r.StatusCode, tt.status, r.Body)
			}
			if tt.backend == "" {
				return
			}
			e := parseEcho(r.Body)
			if e.name != tt.backend {
				t.Errorf("answered by %q, want %q", e.name, tt.backend)
			}
			if want := "GET " + tt.path + " HTTP/1.1"; e.requestLine != want {
				t.Errorf("backend got %q, want %q", e.requestLine, want)
			}
		})
	}
}

// Smooth weighted round robin: weights 3 and 1 over 1000 requests give a
// 3:1 split within ±5 % (issue 3; case 032's test notes).
func TestWeights(t *testing.T) {
	w1 := harness.StartWhoami(t, "heavy")
	w2 := harness.StartWhoami(t, "light")
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    r:
      rule: Host(`+"`w.test`"+`)
      service: s
  services:
    s:
      loadBalancer:
        servers:
          - {url: "http://%s", weight: 3}
          - {url: "http://%s", weight: 1}
          - {url: "http://%s", weight: 0}
`, w1, w2, harness.DeadAddr(t)))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	counts := map[string]int{}
	const n = 1000
	for range n {
		req, _ := http.NewRequest(http.MethodGet, p.URL(t, "web", "/"), nil)
		req.Host = "w.test"
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s (a weight-0 server must never be picked)", resp.StatusCode, body)
		}
		counts[parseEcho(body).name]++
	}
	if h, l := counts["heavy"], counts["light"]; h < 700 || h > 800 || h+l != n {
		t.Errorf("got heavy=%d light=%d over %d requests, want 750±50 / 250±50", h, l, n)
	}
}

func TestErrorStatuses(t *testing.T) {
	w := harness.StartWhoami(t, "slow")
	dead := harness.DeadAddr(t)
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    refused: {rule: "Host(`+"`refused.test`"+`)", service: refused}
    empty:   {rule: "Host(`+"`empty.test`"+`)", service: empty}
    slow:    {rule: "Host(`+"`slow.test`"+`)", service: slow}
  services:
    refused:
      loadBalancer:
        servers: [{url: "http://%s"}]
    empty:
      loadBalancer:
        servers: []
    slow:
      loadBalancer:
        serversTransport: short
        servers: [{url: "http://%s"}]
  serversTransports:
    short:
      forwardingTimeouts:
        responseHeaderTimeout: 500ms
`, dead, w))
	tests := []struct {
		name, host, path string
		status           int
		body             string
	}{
		{"no route is 404", "nowhere.test", "/", 404, ""},
		{"refused is 502", "refused.test", "/", 502, ""},
		{"no server is 503", "empty.test", "/", 503, "no available server"},
		{"response header timeout is 504", "slow.test", "/?wait=5s", 504, ""},
		{"fast enough is 200", "slow.test", "/?wait=10ms", 200, "Name: slow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, p.URL(t, "web", tt.path), harness.Host(tt.host))
			if r.StatusCode != tt.status {
				t.Fatalf("got %d, want %d (%q)", r.StatusCode, tt.status, r.Body)
			}
			if !strings.Contains(r.Body, tt.body) {
				t.Errorf("body %q lacks %q", r.Body, tt.body)
			}
		})
	}
}

// Case 034: the path of a server URL is ignored unless preservePath is set.
func TestServerURLPath(t *testing.T) {
	w1 := harness.StartWhoami(t, "p1")
	w2 := harness.StartWhoami(t, "p2")
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    plain:     {rule: "Host(`+"`plain.test`"+`) && PathPrefix(`+"`/test`"+`)", service: plain}
    preserved: {rule: "Host(`+"`keep.test`"+`) && PathPrefix(`+"`/test`"+`)", service: preserved}
  services:
    plain:
      loadBalancer:
        servers: [{url: "http://%s/path1/"}]
    preserved:
      loadBalancer:
        servers:
          - {url: "http://%s/path2", preservePath: true}
`, w1, w2))
	tests := []struct{ host, want string }{
		{"plain.test", "GET /test/x?y=1 HTTP/1.1"},
		{"keep.test", "GET /path2/test/x?y=1 HTTP/1.1"},
	}
	for _, tt := range tests {
		r := get(t, p.URL(t, "web", "/test/x?y=1"), harness.Host(tt.host))
		if got := parseEcho(r.Body).requestLine; r.StatusCode != 200 || got != tt.want {
			t.Errorf("%s: got %d %q, want 200 %q", tt.host, r.StatusCode, got, tt.want)
		}
	}
}
