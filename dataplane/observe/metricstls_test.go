package observe

import (
	"context"
	"crypto/tls"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gantry-proxy/gantry/config/static"
)

// capturedMetrics is an OTLP metric exporter that keeps what it is given.
type capturedMetrics struct {
	mu  sync.Mutex
	got []metricdata.ResourceMetrics
}

func (c *capturedMetrics) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (c *capturedMetrics) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (c *capturedMetrics) Export(_ context.Context, rm *metricdata.ResourceMetrics) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, *rm)
	return nil
}

func (c *capturedMetrics) ForceFlush(context.Context) error { return nil }
func (c *capturedMetrics) Shutdown(context.Context) error   { return nil }

// TestOTLPMetricsTLSAttributes: an HTTPS request feeds the OTLP
// *_requests_tls_total counters of each level with the attributes of the
// Prometheus labels (tls_version, tls_cipher, then the level's names).
func TestOTLPMetricsTLSAttributes(t *testing.T) {
	exp := &capturedMetrics{}
	m, err := NewOTLPMetrics(context.Background(), OTLPMetricsOptions{
		Config: &static.MetricsOTLP{AddRoutersLabels: true}, exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	sec := event("web@file", 200, time.Millisecond)
	sec.TLS, sec.TLSVersion, sec.TLSCipher = true, tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256
	m.Request(sec)
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	exp.mu.Lock()
	for _, rm := range exp.got {
		for _, sm := range rm.ScopeMetrics {
			for _, mt := range sm.Metrics {
				if !strings.HasSuffix(mt.Name, "_requests_tls_total") {
					continue
				}
				for _, dp := range mt.Data.(metricdata.Sum[float64]).DataPoints {
					var kv []string
					for _, a := range dp.Attributes.ToSlice() {
						kv = append(kv, string(a.Key)+"="+a.Value.Emit())
					}
					got = append(got, mt.Name+"{"+strings.Join(kv, ",")+"} "+attribute.Float64Value(dp.Value).Emit())
				}
			}
		}
	}
	exp.mu.Unlock()
	slices.Sort(got)
	want := []string{
		"traefik_entrypoint_requests_tls_total{entrypoint=web,tls_cipher=TLS_AES_128_GCM_SHA256,tls_version=1.3} 1",
		"traefik_router_requests_tls_total{router=web@file,service=api@file,tls_cipher=TLS_AES_128_GCM_SHA256,tls_version=1.3} 1",
		"traefik_service_requests_tls_total{service=api@file,tls_cipher=TLS_AES_128_GCM_SHA256,tls_version=1.3} 1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("TLS counters:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
