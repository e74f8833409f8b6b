//go:build !race

// The race detector's instrumentation allocates, so allocation counts are
// asserted only without it: scripts/test.sh's "allocation and memory
// assertions" step runs these (-run 'DoesNotAllocate|SessionMemory').

package dataplane

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/generation"
)

// The request lifecycle (router chain with the observer layer, the load
// balancer's exchange, begin/done, the upstream client writing the request
// head and relaying the response) allocates nothing per request once warm:
// the exchange is pooled, the response fields come from the connection's
// cache, the copy buffer from a pool. (The server's own per-request state
// is outside this measure: the writer here reuses its header map.)
func TestRequestLifecycleDoesNotAllocate(t *testing.T) {
	be := newRawBackend(t)
	cfg := fmt.Sprintf(`
http:
  routers: {r@file: {rule: "Host(`+"`bench.test`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: "http://%s"}]}}}
`, be.addr())
	for _, tc := range []struct {
		name string
		opts generation.Options
	}{{"not observed", generation.Options{}}, {"observed", generation.Options{Observer: nopObserver{}}}} {
		t.Run(tc.name, func(t *testing.T) {
			hd := routeHandler(t, cfg, tc.opts)
			req, _ := http.NewRequest(http.MethodGet, "http://bench.test/bench", nil)
			req.RemoteAddr = "192.0.2.10:5555"
			w := &reusedWriter{h: http.Header{}}
			serve := func() {
				clear(w.h)
				w.status, w.n = 0, 0
				hd.ServeHTTP(w, req)
				if w.status != 200 || w.n != len(rawBody) {
					t.Fatalf("got %d with %d bytes", w.status, w.n)
				}
			}
			for range 10 {
				serve()
			}
			if n := testing.AllocsPerRun(200, serve); n != 0 {
				t.Fatalf("%.1f allocations per request, want 0", n)
			}
		})
	}
}
