package generation_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// The active check takes a failing server out of rotation through the
// proxy and brings it back; all servers down gives 503; Pool.Status
// reflects it (Traefik issue 5503).
func TestActiveHealthThroughProxy(t *testing.T) {
	var bDown atomic.Bool
	a := dptest.EchoBackend(t, "a")
	b := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" && bDown.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "Name: b\n")
	}))
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {healthCheck: {path: /health, interval: 20ms, timeout: 1s}, servers: [{url: %q}, {url: %q}]}}}
`, a.URL, b.URL), generation.Options{})
	names := func(n int) map[string]int {
		m := map[string]int{}
		for range n {
			_, body := h.Get("web", "x", "/")
			m[dptest.EchoHeader(body, "Name")]++
		}
		return m
	}
	if got := names(4); got["a"] != 2 || got["b"] != 2 {
		t.Fatalf("both up: got %v", got)
	}
	changed := h.Pool.Changed()
	bDown.Store(true)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("Changed did not fire within 10s of b failing its check")
	}
	if got := names(6); got["b"] != 0 {
		t.Errorf("b is down but got requests: %v", got)
	}
	st := h.Backend(b.URL)
	if st.Up || st.LastError == "" || st.LastCheck.IsZero() || len(st.Services) != 1 || st.Services[0] != "s@file" {
		t.Errorf("status of b = %+v, want down with error, last check, service s@file", st)
	}
	bDown.Store(false)
	dptest.Eventually(t, "b back in rotation", func() bool { return names(2)["b"] == 1 })
	if !h.Backend(b.URL).Up {
		t.Error("status of b still down")
	}

	// Health state survives a configuration swap that keeps the service.
	bDown.Store(true)
	dptest.Eventually(t, "b down again", func() bool { return !h.Backend(b.URL).Up })
	h.Apply(fmt.Sprintf(`
http:
  routers: {r2@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {healthCheck: {path: /health, interval: 20ms, timeout: 1s}, servers: [{url: %q}, {url: %q}]}}}
`, a.URL, b.URL), generation.Options{})
	if got := names(4); got["b"] != 0 {
		t.Errorf("after a swap the known-down server got requests: %v", got)
	}
}

// Passive health: after maxFailedAttempts forwarding errors within
// failureWindow the server leaves rotation; all down gives 503. A request
// without a body that met a refused connection is retried once on another
// server (design.md §2.5), so clients see no error.
func TestPassiveHealthCheck(t *testing.T) {
	a := dptest.EchoBackend(t, "a")
	dead := dptest.DeadAddr(t)
	obs := &dptest.Recorder{}
	h := newHarness(t, nil, obs)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers:
    r@file: {rule: "Host(`+"`x`"+`)", service: s@file}
    d@file: {rule: "Host(`+"`dead`"+`)", service: d@file}
  services:
    s@file: {loadBalancer: {passiveHealthCheck: {failureWindow: 1m, maxFailedAttempts: 2}, servers: [{url: %q}, {url: "http://%s"}]}}
    d@file: {loadBalancer: {passiveHealthCheck: {failureWindow: 1m}, servers: [{url: "http://%s"}]}}
`, a.URL, dead, dead), generation.Options{})
	var codes []int
	for range 8 {
		c, _ := h.Get("web", "x", "/")
		codes = append(codes, c)
	}
	want := []int{200, 200, 200, 200, 200, 200, 200, 200}
	if fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v (refused connections retried on the live server)", codes, want)
	}
	retried := func() (n int) {
		for _, e := range obs.Events() {
			if e.Host == "x" {
				n += e.Retries
			}
		}
		return n
	}
	dptest.Eventually(t, "2 retries observed", func() bool { return retried() == 2 })
	if h.Backend("http://" + dead).Up {
		t.Error("dead server reported up")
	}
	if c, body := h.Get("web", "dead", "/"); c != 503 || body != "no available server\n" {
		t.Errorf("all servers passively down: got %d %q, want 503 no available server", c, body)
	}
}
