//go:build !race

// The race detector's instrumentation allocates, so allocation counts are
// asserted only without it: scripts/test.sh's "allocation and memory
// assertions" step runs these (-run 'DoesNotAllocate|SessionMemory').

package router

import (
	"net/http"
	"testing"
)

// TestMatchDoesNotAllocate asserts that routing a request whose host is
// lower-case and whose path has no escapes allocates nothing.
func TestMatchDoesNotAllocate(t *testing.T) {
	tb := Compile(t.Context(), mergedOf(map[string]string{
		"exact@t":  "Host(`a.example`) && PathPrefix(`/api`)",
		"wild@t":   "Host(`*.example`) && Method(`GET`)",
		"re@t":     "HostRegexp(`^[a-z]+\\.test$`) && PathRegexp(`^/v[0-9]+/`)",
		"query@t":  "Host(`q.example`) && Query(`k`, `v`) && Header(`X-A`, `1`)",
		"client@t": "Host(`c.example`) && ClientIP(`192.0.2.0/24`)",
		"not@t":    "!PathPrefix(`/never`) && Host(`n.example`)",
	}), noopBuilder{}, webOnly)
	h := tb.Handler("web")
	reqs := []*http.Request{
		req("GET", "http://a.example/api/x"),
		req("GET", "http://b.example/"),
		req("GET", "http://z.test/v2/x"),
		req("GET", "http://q.example/?a=1&k=v", "X-A: 1"),
		req("GET", "http://c.example/"),
		req("GET", "http://n.example/"),
		req("GET", "http://none.invalid/"),
	}
	w := discard{h: http.Header{}}
	for i, r := range reqs {
		name, _ := tb.Lookup("web", r)
		if n := testing.AllocsPerRun(200, func() { tb.Lookup("web", r) }); n != 0 {
			t.Errorf("lookup %s%s: %v allocs, want 0", r.Host, r.URL.RequestURI(), n)
		}
		if name == "" {
			continue // the 404 answer itself (http.NotFound) allocates
		}
		if n := testing.AllocsPerRun(200, func() { h.ServeHTTP(w, r) }); n != 0 {
			t.Errorf("serve %s%s: %v allocs per request, want 0", r.Host, r.URL.RequestURI(), n)
		}
		if want := []string{"exact@t", "wild@t", "re@t", "query@t", "client@t", "not@t", ""}[i]; name != want {
			t.Errorf("%s%s: routed to %q, want %q", r.Host, r.URL.RequestURI(), name, want)
		}
	}
}
