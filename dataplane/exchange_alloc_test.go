package dataplane

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/observe"
)

// nopObserver is an observe.Observer that does nothing (access log and metrics
// off): what is left is the cost of observing itself.
type nopObserver struct{}

func (nopObserver) Request(*observe.RequestEvent) {}
func (nopObserver) Conn(string, string, int)      {}

// reusedWriter is a ResponseWriter whose header map is reused, as a server
// that recycles its per-request state would.
type reusedWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *reusedWriter) Header() http.Header         { return w.h }
func (w *reusedWriter) WriteHeader(code int)        { w.status = code }
func (w *reusedWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// routeHandler compiles cfg and returns the chain of router r@file.
func routeHandler(t testing.TB, cfg string, opts generation.Options) http.Handler {
	t.Helper()
	h := newHarness(t, nil, nil)
	tbl := h.Apply(cfg, opts)
	req, _ := http.NewRequest(http.MethodGet, "http://bench.test/bench", nil)
	_, hd := tbl.Lookup("web", req)
	if hd == nil {
		t.Fatal("no route")
	}
	return hd
}

// BenchmarkRequestLifecycle is TestRequestLifecycleDoesNotAllocate's path
// as a benchmark (observed route): router chain, exchange, upstream client
// and a raw loopback backend, without the server.
func BenchmarkRequestLifecycle(b *testing.B) {
	be := newRawBackend(b)
	hd := routeHandler(b, fmt.Sprintf(`
http:
  routers: {r@file: {rule: "Host(`+"`bench.test`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: "http://%s"}]}}}
`, be.addr()), generation.Options{Observer: nopObserver{}})
	req, _ := http.NewRequest(http.MethodGet, "http://bench.test/bench", nil)
	req.RemoteAddr = "192.0.2.10:5555"
	w := &reusedWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		hd.ServeHTTP(w, req)
	}
}
