package dataplane

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/conninfo"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/observe"
)

// BenchmarkObservedRequest is one request through the real router chain
// (observe layer, load balancer, upstream client, a raw loopback backend)
// on entrypoint "web", plain and with each observability feature on its
// own, configured as Gantry's static configuration would: the JSON access
// log written to a file (its writer goroutine running), the Prometheus
// metrics with entrypoint, router and service labels, and tracing at
// sample rates 0.01 and 1 exported over OTLP/HTTP to a local collector
// that discards what it receives (reading it in large reads: it stands
// for a collector on another machine, whose CPU is not Gantry's). Compare cpu-ns/op (the process's user
// and system CPU per request from getrusage: the writer and exporter
// goroutines included, unlike ns/op) and allocs/op with "plain".
func BenchmarkObservedRequest(b *testing.B) {
	be := newRawBackend(b)
	cfg := fmt.Sprintf(`
http:
  routers: {r@file: {rule: "Host(`+"`bench.test`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: "http://%s"}]}}}
`, be.addr())
	run := func(b *testing.B, opts generation.Options) {
		hd := routeHandler(b, cfg, opts)
		req, _ := http.NewRequest(http.MethodGet, "http://bench.test/bench?q=1", nil)
		req.RemoteAddr = "192.0.2.10:5555"
		req.RequestURI = "/bench?q=1" // as a server sets it
		req.Header.Set("User-Agent", "bench/1.0")
		req.Header.Set("Accept", "*/*")
		req = req.WithContext(conninfo.With(req.Context(), &conninfo.Info{EntryPoint: "web"}))
		w := &reusedWriter{h: http.Header{}}
		serve := func() {
			clear(w.h)
			w.status, w.n = 0, 0
			delete(req.Header, "Traceparent") // the request is reused: as new each time
			hd.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
		}
		for range 100 {
			serve()
		}
		b.ReportAllocs()
		c0 := benchCPU(b)
		for b.Loop() {
			serve()
		}
		b.ReportMetric(float64(benchCPU(b)-c0)/float64(b.N), "cpu-ns/op")
	}
	b.Run("plain", func(b *testing.B) { run(b, generation.Options{}) })
	b.Run("accesslog-json-file", func(b *testing.B) {
		f, err := observe.OpenFile(filepath.Join(b.TempDir(), "access.log"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		a, err := observe.NewAccessLog(f, &static.AccessLog{Format: "json"})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		run(b, generation.Options{Observer: a})
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		if a.Dropped() > 0 {
			b.Logf("%d lines dropped", a.Dropped())
		}
	})
	b.Run("metrics-ep+router+service", func(b *testing.B) {
		m := observe.NewMetrics(observe.MetricsOptions{Prometheus: &static.Prometheus{AddRoutersLabels: true}})
		run(b, generation.Options{Observer: m})
	})
	for _, rate := range []float64{0.01, 1} {
		b.Run(fmt.Sprintf("tracing-%g", rate), func(b *testing.B) {
			buf := make([]byte, 1<<20) // one export at a time: the exporter waits for each answer
			collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for { // reads of the body straight into buf: as many bytes as the socket has
					if _, err := r.Body.Read(buf); err != nil {
						return
					}
				}
			}))
			defer collector.Close()
			tr, err := observe.NewTracing(context.Background(), &static.Tracing{SampleRate: &rate,
				OTLP: &static.TracingOTLP{HTTP: &static.OTLPHTTP{Endpoint: collector.URL + "/v1/traces"}}})
			if err != nil {
				b.Fatal(err)
			}
			run(b, generation.Options{Tracing: tr})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := tr.Shutdown(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// benchCPU is the process's user plus system CPU time so far (getrusage).
func benchCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
