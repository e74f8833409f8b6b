package generation_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/generation"
)

// Through a real load balancer: the slow backend gets only the requests
// it must (its first sample and probes), the fast one the rest; the record
// survives a configuration swap (state lives in the Pool).
func TestLeastTimeBalancer(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(500 * time.Millisecond) // far above a loaded machine's latency to the fast one
		fmt.Fprint(w, "slow")
	}))
	defer slow.Close()
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "fast") }))
	defer fast.Close()
	h := newHarness(t, nil, nil)
	cfg := fmt.Sprintf(`
http:
  routers: {r@file: {rule: "Host(`+"`lt`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {strategy: leasttime, servers: [{url: %q}, {url: %q}]}}}
`, slow.URL, fast.URL)
	tbl := h.Apply(cfg, generation.Options{})
	if st := tbl.Report().Routers["r@file"]; st == nil || st.Status != "enabled" {
		t.Fatalf("router status %+v, want enabled", st)
	}
	counts := map[string]int{}
	for range 20 {
		code, body := h.Get("web", "lt", "/")
		if code != 200 {
			t.Fatalf("status %d", code)
		}
		counts[body]++
	}
	if counts["slow"] > 2 || counts["fast"] < 18 {
		t.Fatalf("distribution %v, want the slow server at most twice (first sample, maybe a probe)", counts)
	}
	h.Apply(strings.Replace(cfg, "leasttime", "leasttime, passHostHeader: false", 1), generation.Options{})
	counts = map[string]int{}
	for range 10 {
		_, body := h.Get("web", "lt", "/")
		counts[body]++
	}
	if counts["slow"] > 1 {
		t.Fatalf("after a swap %v: the TTFB record was lost", counts)
	}
}
