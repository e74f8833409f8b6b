package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// counting is a backend (in the test process) that counts what it received
// per path and answers by rule.
type counting struct {
	name string
	mu   sync.Mutex
	hits map[string]int
	rule func(n int, w http.ResponseWriter, r *http.Request) bool // true: answered
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	c.mu.Lock()
	c.hits[r.Method+" "+r.URL.Path]++
	n := c.hits[r.Method+" "+r.URL.Path]
	c.mu.Unlock()
	if c.rule != nil && c.rule(n, w, r) {
		return
	}
	fmt.Fprint(w, c.name)
}

func (c *counting) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[key]
}

func newCounting(t *testing.T, name string, rule func(int, http.ResponseWriter, *http.Request) bool) (*counting, string) {
	c := &counting{name: name, hits: map[string]int{}, rule: rule}
	s := httptest.NewServer(c)
	t.Cleanup(s.Close)
	return c, s.URL
}

// Issue 16 options acting through the binary, against real backends:
// failover.errors (a primary answering 503), retry v3.7 (status retries
// counted at the backend, POST not replayed), sticky cookies across a
// weight-0 change, and a leasttime service routing.
func TestResilienceOptionsThroughGantry(t *testing.T) {
	primary, primaryURL := newCounting(t, "primary", func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	})
	_, fallbackURL := newCounting(t, "fallback", nil)
	flaky, flakyURL := newCounting(t, "flaky", func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	_, aURL := newCounting(t, "a", nil)
	_, bURL := newCounting(t, "b", nil)
	dynamic := `
http:
  routers:
    fo:     {rule: "Host(` + "`fo.test`" + `)", service: fo}
    retry:  {rule: "Host(` + "`retry.test`" + `)", service: flaky, middlewares: [r]}
    sticky: {rule: "Host(` + "`sticky.test`" + `)", service: ab}
    lt:     {rule: "Host(` + "`lt.test`" + `)", service: lt}
  middlewares:
    r: {retry: {attempts: 4, status: ["503"], initialInterval: 10ms}}
  services:
    primary:  {loadBalancer: {servers: [{url: %q}]}}
    fallback: {loadBalancer: {servers: [{url: %q}]}}
    fo:       {failover: {service: primary, fallback: fallback, errors: {status: ["500-504"]}}}
    flaky:    {loadBalancer: {servers: [{url: %q}]}}
    ab:       {loadBalancer: {sticky: {cookie: {name: ab_lb, httpOnly: true}}, servers: [{url: %q}, {url: %q, weight: %d}]}}
    lt:       {loadBalancer: {strategy: leasttime, servers: [{url: %q}, {url: %q}]}}
`
	cfg := func(bWeight int) string {
		return fmt.Sprintf(dynamic, primaryURL, fallbackURL, flakyURL, aURL, bURL, bWeight, aURL, bURL)
	}
	p := startProxy(t, map[string]string{"web": ""}, "", cfg(1))
	send := func(host, method string, cookie *http.Cookie) (*http.Response, string) {
		req, _ := http.NewRequest(method, p.URL(t, "web", "/flaky"), strings.NewReader("payload"))
		req.Host = host
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	if resp, body := send("fo.test", http.MethodPost, nil); resp.StatusCode != 200 || body != "fallback" || primary.count("POST /flaky") != 1 {
		t.Errorf("failover: %d %q, primary got %d; want the fallback's 200 after one primary 503", resp.StatusCode, body, primary.count("POST /flaky"))
	}
	if resp, body := send("retry.test", http.MethodGet, nil); resp.StatusCode != 200 || body != "flaky" || flaky.count("GET /flaky") != 3 {
		t.Errorf("retry GET: %d %q after %d tries; want 200 after 3", resp.StatusCode, body, flaky.count("GET /flaky"))
	}
	if resp, _ := send("retry.test", http.MethodPost, nil); resp.StatusCode != 503 || flaky.count("POST /flaky") != 1 {
		t.Errorf("retry POST: %d after %d tries; want the first 503, not replayed", resp.StatusCode, flaky.count("POST /flaky"))
	}
	if resp, _ := send("lt.test", http.MethodGet, nil); resp.StatusCode != 200 {
		t.Errorf("leasttime service: %d", resp.StatusCode)
	}

	// Sticky: find a client pinned to b, drain b (weight 0), and the
	// client is moved to a with a new cookie.
	var cookie *http.Cookie
	for range 4 {
		resp, body := send("sticky.test", http.MethodGet, nil)
		if body == "b" {
			for _, c := range resp.Cookies() {
				if c.Name == "ab_lb" && c.HttpOnly {
					cookie = c
				}
			}
			break
		}
	}
	if cookie == nil {
		t.Fatal("no request landed on b with an ab_lb cookie")
	}
	for range 3 {
		if _, body := send("sticky.test", http.MethodGet, cookie); body != "b" {
			t.Fatalf("pinned client served by %s", body)
		}
	}
	p.update(t, cfg(0))
	resp, body := send("sticky.test", http.MethodGet, cookie)
	if body != "a" || len(resp.Cookies()) != 1 || resp.Cookies()[0].Value == cookie.Value {
		t.Errorf("after b was drained: served by %s with Set-Cookie %v; want a and a new cookie", body, resp.Header["Set-Cookie"])
	}
}
