//go:build !race

package observe

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
)

// TestRouteMetricsDoNotAllocate: with entrypoint, router and service
// labels on, a route's request allocates nothing once its label sets were
// seen (TLS included).
func TestRouteMetricsDoNotAllocate(t *testing.T) {
	m := NewMetrics(MetricsOptions{Prometheus: &static.Prometheus{AddRoutersLabels: true}})
	route := m.ForRoute("web@file", "api@file")
	ev := event("web@file", 200, time.Millisecond)
	ev.TLS, ev.TLSVersion, ev.TLSCipher = true, tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256
	route.Request(ev)
	if n := testing.AllocsPerRun(100, func() { route.Request(ev) }); n != 0 {
		t.Errorf("%v allocations per request, want 0", n)
	}
}
