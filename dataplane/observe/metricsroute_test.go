package observe

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
)

// routeEvents are a route's requests with more label sets than a route
// caches: twelve status codes, two methods, gRPC, two TLS suites,
// retries, a middleware's replaced answer and a call to another service;
// and one request of another router (never cached by this route).
func routeEvents() []*RequestEvent {
	var evs []*RequestEvent
	for i := range 40 {
		ev := event("web@file", 200+i%12*25, time.Duration(i)*time.Millisecond)
		ev.Header = http.Header{"X-Tenant": {fmt.Sprint("t", i%3)}}
		if i%5 == 0 {
			ev.Method = http.MethodPost
		}
		if i%7 == 0 {
			ev.Header.Set("Content-Type", "application/grpc")
			ev.ResponseHeader = http.Header{"Grpc-Status": {"3"}}
		}
		if i%2 == 0 {
			ev.TLS, ev.TLSVersion, ev.TLSCipher = true, tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256
			if i%4 == 0 {
				ev.TLSVersion, ev.TLSCipher = tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
			}
		}
		ev.Retries = i % 3
		if i%9 == 0 {
			ev.OriginStatus = 502
			ev.Status = 503
			ev.Calls = []ServiceCall{{Service: "errors@file", Status: 200, Duration: time.Millisecond, Bytes: 10}}
		}
		evs = append(evs, ev)
	}
	other := event("other@file", 200, time.Millisecond)
	other.Service = "other-svc@file"
	return append(evs, other)
}

// TestMetricsForRouteRecordsAsShared: a route's observer (ForRoute, made
// when a generation is built) records exactly what Metrics.Request does
// for the same requests, every label set on, also through Tee.
func TestMetricsForRouteRecordsAsShared(t *testing.T) {
	opts := func() MetricsOptions {
		return MetricsOptions{Prometheus: &static.Prometheus{AddRoutersLabels: true, HeaderLabels: map[string]string{"tenant": "X-Tenant"}}}
	}
	shared, routed := NewMetrics(opts()), NewMetrics(opts())
	ro, ok := Tee(routed, NewLive()).(RouteObserver)
	if !ok {
		t.Fatal("Tee of Metrics is not a RouteObserver")
	}
	route := ro.ForRoute("web@file", "api@file")
	for range 3 {
		for _, ev := range routeEvents() {
			shared.Request(ev)
			route.Request(ev)
		}
	}
	want, got := scrape(t, shared.Handler()), scrape(t, routed.Handler())
	if got != want {
		t.Errorf("through ForRoute:\n%s\nwant (Request):\n%s", got, want)
	}
}

// BenchmarkMetricsRoute is BenchmarkMetricsRequest's request (entrypoint,
// router and service labels on) through the route's observer, as the
// dataplane reports it, and through Metrics.Request.
func BenchmarkMetricsRoute(b *testing.B) {
	m := NewMetrics(MetricsOptions{Prometheus: &static.Prometheus{AddRoutersLabels: true}})
	ev := event("web@file", 200, time.Millisecond)
	for name, o := range map[string]Observer{"route": m.ForRoute("web@file", "api@file"), "shared": m} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuTime(b)
			for b.Loop() {
				o.Request(ev)
			}
			b.ReportMetric(float64(cpuTime(b)-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}
