package dataplane

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// handlerTransport runs requests through an in-process handler, so health
// checks can be tested under synctest (whose clock cannot advance while a
// goroutine waits on a real socket).
type handlerTransport map[string]http.Handler // by host

func (ht handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h, ok := ht[r.URL.Host]
	if !ok {
		return nil, fmt.Errorf("dial %s: connection refused", r.URL.Host)
	}
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); h.ServeHTTP(rec, r) }()
	select {
	case <-done:
		return rec.Result(), nil
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// Case 032: 200, 204 and a 301 followed to a 200 are healthy; 404 and a
// health endpoint slower than the timeout are down after their first
// check, which runs one interval after start; one success brings a server
// back; unhealthyInterval paces checks of a down server; status: 204 makes
// only 204 healthy.
func TestActiveHealthCheckStatuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fail404 atomic.Bool
		fail404.Store(true)
		hosts := handlerTransport{
			"s200:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
			"s204:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }),
			"s301:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/health" {
					http.Redirect(w, r, "/health/", http.StatusMovedPermanently)
				}
			}),
			"s404:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if fail404.Load() {
					w.WriteHeader(404)
				}
			}),
			"slow:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(15 * time.Second):
				case <-r.Context().Done():
				}
			}),
		}
		p := NewPool(slog.New(slog.DiscardHandler), PoolOptions{})
		defer p.Close()
		unhealthy := config.Duration(time.Second)
		hc := &config.ServerHealthCheck{Path: "/health", Interval: config.Duration(5 * time.Second), Timeout: config.Duration(2 * time.Second), UnhealthyInterval: &unhealthy}
		checkers := map[string]*checker{}
		for _, host := range []string{"s200", "s204", "s301", "s404", "slow"} {
			u, _ := url.Parse("http://" + host + ":80")
			spec, err := newHealthSpec(u, hc)
			if err != nil {
				t.Fatal(err)
			}
			checkers[host] = p.acquireChecker(u, spec, "test", hosts)
		}
		changed := p.Changed()
		up := func() map[string]bool {
			m := map[string]bool{}
			for h, c := range checkers {
				m[h] = c.up.Load()
			}
			return m
		}
		want := map[string]bool{"s200": true, "s204": true, "s301": true, "s404": true, "slow": true}
		time.Sleep(4 * time.Second)
		synctest.Wait()
		if got := up(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("before the first interval: got %v, want all up", got)
		}
		time.Sleep(3 * time.Second) // t=7s: first checks done (slow one timed out at 7s)
		synctest.Wait()
		want["s404"], want["slow"] = false, false
		if got := up(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after the first check: got %v, want %v", got, want)
		}
		select {
		case <-changed:
		default:
			t.Error("Changed did not fire when servers went down")
		}
		if c := checkers["slow"]; c.lastErr.Load() == nil {
			t.Error("slow server has no last error")
		}
		fail404.Store(false)
		time.Sleep(1 * time.Second) // unhealthyInterval 1s: the next check of s404 at t=6s+1s+…
		synctest.Wait()
		time.Sleep(1 * time.Second)
		synctest.Wait()
		if !checkers["s404"].up.Load() {
			t.Error("s404 answering 200 again is still down")
		}
		for _, c := range checkers {
			p.releaseChecker(c)
		}
	})
}

func TestHealthCheckExactStatusAndRedirectOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hosts := handlerTransport{
			"a:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),                                                           // 200
			"b:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "http://gone:80/", http.StatusFound) }), // 302, target refuses
		}
		p := NewPool(slog.New(slog.DiscardHandler), PoolOptions{})
		defer p.Close()
		off := false
		tests := []struct {
			host string
			hc   config.ServerHealthCheck
			up   bool
		}{
			{"a", config.ServerHealthCheck{Status: 204}, false},
			{"a", config.ServerHealthCheck{Status: 200, Method: "HEAD"}, true},
			{"b", config.ServerHealthCheck{}, false},                     // redirect followed to a refused server
			{"b", config.ServerHealthCheck{FollowRedirects: &off}, true}, // the 302 itself counts
		}
		var cs []*checker
		for _, tt := range tests {
			tt.hc.Interval = config.Duration(time.Second)
			u, _ := url.Parse("http://" + tt.host + ":80")
			spec, _ := newHealthSpec(u, &tt.hc)
			cs = append(cs, p.acquireChecker(u, spec, "t", hosts))
		}
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		for i, tt := range tests {
			if got := cs[i].up.Load(); got != tt.up {
				t.Errorf("%s %+v: up=%v, want %v (last error %v)", tt.host, tt.hc, got, tt.up, cs[i].lastErr.Load())
			}
			p.releaseChecker(cs[i])
		}
	})
}

// The active check takes a failing server out of rotation through the
// proxy and brings it back; all servers down gives 503; Pool.Status
// reflects it (Traefik issue 5503).
func TestActiveHealthThroughProxy(t *testing.T) {
	var bDown atomic.Bool
	a := echoBackend(t, "a")
	b := echoHandlerServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" && bDown.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "Name: b\n")
	}))
	h := newHarness(t, nil, nil)
	defer closeIdle()
	h.apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {healthCheck: {path: /health, interval: 20ms, timeout: 1s}, servers: [{url: %q}, {url: %q}]}}}
`, a.URL, b.URL), GenerationOptions{})
	names := func(n int) map[string]int {
		m := map[string]int{}
		for range n {
			_, body := h.get("web", "x", "/")
			m[echoHeader(body, "Name")]++
		}
		return m
	}
	if got := names(4); got["a"] != 2 || got["b"] != 2 {
		t.Fatalf("both up: got %v", got)
	}
	changed := h.pool.Changed()
	bDown.Store(true)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("Changed did not fire within 10s of b failing its check")
	}
	if got := names(6); got["b"] != 0 {
		t.Errorf("b is down but got requests: %v", got)
	}
	st := statusOf(h.pool, b.URL)
	if st.Up || st.LastError == "" || st.LastCheck.IsZero() || len(st.Services) != 1 || st.Services[0] != "s@file" {
		t.Errorf("status of b = %+v, want down with error, last check, service s@file", st)
	}
	bDown.Store(false)
	eventually(t, "b back in rotation", func() bool { return names(2)["b"] == 1 })
	if !statusOf(h.pool, b.URL).Up {
		t.Error("status of b still down")
	}

	// Health state survives a configuration swap that keeps the service.
	bDown.Store(true)
	eventually(t, "b down again", func() bool { return !statusOf(h.pool, b.URL).Up })
	h.apply(fmt.Sprintf(`
http:
  routers: {r2@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {healthCheck: {path: /health, interval: 20ms, timeout: 1s}, servers: [{url: %q}, {url: %q}]}}}
`, a.URL, b.URL), GenerationOptions{})
	if got := names(4); got["b"] != 0 {
		t.Errorf("after a swap the known-down server got requests: %v", got)
	}
}

func statusOf(p *Pool, u string) BackendStatus {
	for _, s := range p.Status() {
		if s.URL == u {
			return s
		}
	}
	return BackendStatus{}
}

// Passive health: after maxFailedAttempts forwarding errors within
// failureWindow the server leaves rotation; all down gives 503. A request
// without a body that met a refused connection is retried once on another
// server (design.md §2.5), so clients see no error.
func TestPassiveHealthCheck(t *testing.T) {
	a := echoBackend(t, "a")
	dead := deadAddr(t)
	obs := &recorder{}
	h := newHarness(t, nil, obs)
	defer closeIdle()
	h.apply(fmt.Sprintf(`
http:
  routers:
    r@file: {rule: "Host(`+"`x`"+`)", service: s@file}
    d@file: {rule: "Host(`+"`dead`"+`)", service: d@file}
  services:
    s@file: {loadBalancer: {passiveHealthCheck: {failureWindow: 1m, maxFailedAttempts: 2}, servers: [{url: %q}, {url: "http://%s"}]}}
    d@file: {loadBalancer: {passiveHealthCheck: {failureWindow: 1m}, servers: [{url: "http://%s"}]}}
`, a.URL, dead, dead), GenerationOptions{})
	var codes []int
	for range 8 {
		c, _ := h.get("web", "x", "/")
		codes = append(codes, c)
	}
	want := []int{200, 200, 200, 200, 200, 200, 200, 200}
	if fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v (refused connections retried on the live server)", codes, want)
	}
	retried := func() (n int) {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		for _, e := range obs.events {
			if e.Host == "x" {
				n += e.Retries
			}
		}
		return n
	}
	eventually(t, "2 retries observed", func() bool { return retried() == 2 })
	if statusOf(h.pool, "http://"+dead).Up {
		t.Error("dead server reported up")
	}
	if c, body := h.get("web", "dead", "/"); c != 503 || body != "no available server\n" {
		t.Errorf("all servers passively down: got %d %q, want 503 no available server", c, body)
	}
}
