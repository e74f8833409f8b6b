package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
	"github.com/gantry-proxy/gantry/dataplane/observe"
)

func TestRouteByHostAndPath(t *testing.T) {
	a, b := dptest.EchoBackend(t, "a"), dptest.EchoBackend(t, "b")
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers:
    a@file: {rule: "Host(`+"`a.test`"+`)", service: a@file}
    b@file: {rule: "Host(`+"`a.test`"+`) && PathPrefix(`+"`/b`"+`)", service: b@file}
  services:
    a@file: {loadBalancer: {servers: [{url: %q}]}}
    b@file: {loadBalancer: {servers: [{url: %q}]}}
`, a.URL, b.URL), generation.Options{})
	tests := []struct {
		name, host, path, want string
		status                 int
	}{
		{"host", "a.test", "/x", "Name: a", 200},
		{"host and path", "a.test", "/b/c", "Name: b", 200},
		{"no route", "other.test", "/", "404 page not found", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := h.Get("web", tt.host, tt.path)
			if code != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("got %d %q, want %d containing %q", code, body, tt.status, tt.want)
			}
		})
	}
}

// Case 034: the path of a server URL is ignored unless preservePath is set;
// then it is joined with exactly one slash. Semicolons in the query become
// '&' (Traefik).
func TestServerURLPath(t *testing.T) {
	be := dptest.EchoBackend(t, "s")
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers:
    plain@file: {rule: "PathPrefix(`+"`/test`"+`)", service: plain@file}
    keep@file: {rule: "PathPrefix(`+"`/keep`"+`)", service: keep@file}
    keep2@file: {rule: "PathPrefix(`+"`/two`"+`)", service: keep2@file}
  services:
    plain@file: {loadBalancer: {servers: [{url: "%[1]s/path1/"}, {url: "%[1]s/path2"}]}}
    keep@file: {loadBalancer: {servers: [{url: "%[1]s/path1/", preservePath: true}]}}
    keep2@file: {loadBalancer: {servers: [{url: "%[1]s/path2", preservePath: true}]}}
`, be.URL), generation.Options{})
	tests := []struct{ path, want string }{
		{"/test/x?y=1", "GET /test/x?y=1 HTTP/1.1"},
		{"/test/x?y=1", "GET /test/x?y=1 HTTP/1.1"}, // second server, same path
		{"/keep/x?y=1", "GET /path1/keep/x?y=1 HTTP/1.1"},
		{"/two/x?y=1", "GET /path2/two/x?y=1 HTTP/1.1"},
		{"/test/a%2Fb", "GET /test/a%2Fb HTTP/1.1"},
		{"/test/q?a=1;b=2", "GET /test/q?a=1&b=2 HTTP/1.1"},
	}
	for _, tt := range tests {
		_, body := h.Get("web", "x.test", tt.path)
		if !strings.Contains(body, tt.want+"\n") {
			t.Errorf("GET %s: backend saw %q, want request line %q", tt.path, dptest.FirstLines(body, 2), tt.want)
		}
	}
}

// Case 026: forwarded headers are regenerated from the connection unless
// the peer is in trustedIPs (or insecure is set); when trusted, they are
// kept and the peer is appended to X-Forwarded-For.
func TestForwardedHeaders(t *testing.T) {
	be := dptest.EchoBackend(t, "echo")
	const nginx, attacker = "127.0.0.31", "127.0.0.9"
	cfg := fmt.Sprintf(`
http:
  routers:
    shop@file: {rule: "Host(`+"`shop.example.com`"+`)", service: shop@file}
    nohost@file: {rule: "Host(`+"`nohost.example.com`"+`)", service: nohost@file}
  services:
    shop@file: {loadBalancer: {servers: [{url: %[1]q}]}}
    nohost@file: {loadBalancer: {passHostHeader: false, servers: [{url: %[1]q}]}}
`, be.URL)
	fromNginx := map[string]string{
		"X-Forwarded-For":   "203.0.113.7",
		"X-Forwarded-Proto": "https",
		"X-Forwarded-Host":  "shop.example.com",
		"X-Real-Ip":         "203.0.113.7",
	}
	fromAttacker := map[string]string{"X-Forwarded-For": "203.0.113.250", "X-Forwarded-Proto": "https", "X_Forwarded_For": "6.6.6.6"}
	type want map[string]string // "" means absent
	tests := []struct {
		name   string
		fh     *static.ForwardedHeaders
		peer   string
		sent   map[string]string
		expect want
	}{
		{"C1 nginx untrusted", nil, nginx, fromNginx, want{
			"X-Forwarded-For": nginx, "X-Real-Ip": nginx, "X-Forwarded-Proto": "http",
			"X-Forwarded-Port": "80", "X-Forwarded-Host": "shop.example.com", "X-Forwarded-Server": "gantry-test",
		}},
		{"C2 nginx trusted", &static.ForwardedHeaders{TrustedIPs: []string{nginx + "/32"}}, nginx, fromNginx, want{
			"X-Forwarded-For": "203.0.113.7, " + nginx, "X-Real-Ip": "203.0.113.7", "X-Forwarded-Proto": "https",
			"X-Forwarded-Host": "shop.example.com", "X-Forwarded-Port": "443",
		}},
		{"C2 attacker untrusted", &static.ForwardedHeaders{TrustedIPs: []string{nginx}}, attacker, fromAttacker, want{
			"X-Forwarded-For": attacker, "X-Forwarded-Proto": "http", "X_forwarded_for": "",
		}},
		{"C3 insecure trusts all", &static.ForwardedHeaders{Insecure: true}, attacker, fromAttacker, want{
			"X-Forwarded-For": "203.0.113.250, " + attacker, "X-Forwarded-Proto": "https", "X_forwarded_for": "",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0", ForwardedHeaders: tt.fh}}, nil)
			h.Apply(cfg, generation.Options{})
			body := rawGet(t, tt.peer, h.Addr("web"), "shop.example.com", tt.sent)
			for k, v := range tt.expect {
				if v == "" {
					if dptest.EchoHas(body, k) {
						t.Errorf("backend got %s: %q, want it removed", k, dptest.EchoHeader(body, k))
					}
					continue
				}
				if got := dptest.EchoHeader(body, k); got != v {
					t.Errorf("backend got %s: %q, want %q", k, got, v)
				}
			}
			if got := dptest.EchoHeader(body, "Host"); got != "shop.example.com" {
				t.Errorf("backend got Host %q, want the client's (passHostHeader default true)", got)
			}
		})
	}
	t.Run("passHostHeader false", func(t *testing.T) {
		h := newHarness(t, nil, nil)
		h.Apply(cfg, generation.Options{})
		body := rawGet(t, "127.0.0.1", h.Addr("web"), "nohost.example.com", nil)
		if got, want := dptest.EchoHeader(body, "Host"), strings.TrimPrefix(be.URL, "http://"); got != want {
			t.Errorf("backend got Host %q, want %q", got, want)
		}
	})
	t.Run("Connection cannot strip forwarding headers", func(t *testing.T) {
		h := newHarness(t, nil, nil)
		h.Apply(cfg, generation.Options{})
		body := rawGet(t, "127.0.0.1", h.Addr("web"), "shop.example.com", map[string]string{"Connection": "X-Forwarded-For, X-Real-Ip, X-Forwarded-Proto"})
		for _, k := range []string{"X-Forwarded-For", "X-Real-Ip", "X-Forwarded-Proto"} {
			if dptest.EchoHeader(body, k) == "" {
				t.Errorf("backend did not get %s; a client's Connection header removed it", k)
			}
		}
	})
}

// rawGet sends one HTTP/1.1 GET from source IP peer (any 127/8 address on
// Linux loopback) and returns the response body.
func rawGet(t testing.TB, peer, addr, host string, hdr map[string]string) string {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(peer)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", peer, err)
	}
	defer c.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "GET / HTTP/1.1\r\nHost: %s\r\n", host)
	for k, v := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("Connection: close\r\n\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	return string(body)
}

// Case 034 note: an h2c:// server URL speaks HTTP/2 over cleartext to the
// backend.
func TestH2CBackend(t *testing.T) {
	be := h2cBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "Name: h2c\nProto: %s\n", r.Proto)
	}))
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: "h2c://%s"}]}}}
`, be.Listener.Addr()), generation.Options{})
	if code, body := h.Get("web", "x", "/"); code != 200 || dptest.EchoHeader(body, "Proto") != "HTTP/2.0" {
		t.Errorf("got %d %q, want 200 over HTTP/2.0", code, body)
	}
}

// The observe.Observer sees connections open and close per entrypoint and protocol.
func TestObserverConnCounts(t *testing.T) {
	be := dptest.EchoBackend(t, "b")
	obs := &dptest.Recorder{}
	h := newHarness(t, nil, obs)
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Get("http://" + h.Addr("web") + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	count := func() int {
		return obs.Conns("web/http")
	}
	if got := count(); got != 1 {
		t.Errorf("open connections = %d, want 1", got)
	}
	tr.CloseIdleConnections()
	dptest.Eventually(t, "the connection to be reported closed", func() bool { return count() == 0 })
	ev, ok := obs.Find(func(e observe.RequestEvent) bool { return e.Router == "r@file" })
	if !ok || ev.Status != 200 || ev.EntryPoint != "web" || ev.Upstream != be.URL || ev.BytesOut == 0 || ev.Method != "GET" {
		t.Errorf("request event %+v, want 200 on web via r@file to %s with bytes", ev, be.URL)
	}
}
