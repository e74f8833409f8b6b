package observe

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gantry-proxy/gantry/config/static"
)

func TestTracingConfigErrors(t *testing.T) {
	bad := 1.5
	for _, c := range []*static.Tracing{
		{SampleRate: &bad},
		{OTLP: &static.TracingOTLP{HTTP: &static.OTLPHTTP{Endpoint: "collector:4318"}}},
		{OTLP: &static.TracingOTLP{HTTP: &static.OTLPHTTP{}, GRPC: &static.OTLPGRPC{}}},
		{OTLP: &static.TracingOTLP{GRPC: &static.OTLPGRPC{Endpoint: "nohostport"}}},
	} {
		if _, err := NewTracing(context.Background(), c); err == nil || !strings.Contains(err.Error(), "tracing.") {
			t.Errorf("%+v: error %v, want one naming the tracing option", c, err)
		}
	}
}

// discard is a SpanExporter that counts and drops spans.
type discard struct{ n int }

func (d *discard) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	d.n += len(s)
	return nil
}
func (d *discard) Shutdown(context.Context) error { return nil }

// TestTraceIDsReachTheAccessLog: a traced request's JSON access-log line
// carries its TraceId and SpanId; the backend-facing traceparent names the
// same trace.
func TestTraceIDsReachTheAccessLog(t *testing.T) {
	exp := &discard{}
	tr := newTracing(&static.Tracing{}, 1, exp)
	defer func() { _ = tr.Shutdown(context.Background()) }()
	r := httptest.NewRequest("GET", "http://app.example/x", nil)
	r, trace := tr.Start(r, "web", "app@file", "Host(`app.example`)", "app@file")
	trace.Attempt(r, "http://10.0.0.1:8080")
	tp := r.Header.Get("Traceparent")
	trace.AttemptDone(200, nil, nil)
	ev := event("app@file", 200, time.Millisecond)
	trace.End(ev)
	a, err := NewAccessLog(io.Discard, &static.AccessLog{Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(a.appendJSON(nil, ev, 1), &m); err != nil {
		t.Fatal(err)
	}
	id, _ := m["TraceId"].(string)
	if len(id) != 32 || !strings.Contains(tp, id) || len(m["SpanId"].(string)) != 16 {
		t.Errorf("TraceId %v SpanId %v, traceparent %q", m["TraceId"], m["SpanId"], tp)
	}
	internal := httptest.NewRequest("GET", "http://x/metrics", nil)
	if _, tr2 := tr.Start(internal, "traefik", "prometheus@internal", "", "prometheus@internal"); tr2 != nil {
		t.Error("an internal request is traced without addInternals")
	}
}

// BenchmarkObserveOverhead measures what observing one request costs on
// top of the dataplane: live stats and metrics alone, plus the JSON access
// log, plus tracing sampled at 1.0 and at 0.01 (spans to a discarding
// exporter). Compare ns/op and allocs/op between the sub-benchmarks.
func BenchmarkObserveOverhead(b *testing.B) {
	base := func() Observer {
		return Tee(NewLive(), NewMetrics(MetricsOptions{}))
	}
	run := func(b *testing.B, obs Observer, tr *Tracing) {
		req := httptest.NewRequest("GET", "http://app.example/x?y=1", nil)
		req.Header.Set("User-Agent", "bench")
		ev := event("app@file", 200, time.Millisecond)
		b.ReportAllocs()
		for b.Loop() {
			r := req
			var t *Trace
			if tr != nil {
				r, t = tr.Start(req, "web", "app@file", "Host(`app.example`)", "app@file")
				t.Attempt(r, "http://10.0.0.1:8080")
				t.AttemptDone(200, nil, nil)
				delete(r.Header, "Traceparent")
			}
			t.End(ev)
			obs.Request(ev)
		}
	}
	b.Run("stats+metrics", func(b *testing.B) { run(b, base(), nil) })
	b.Run("+accesslog-json", func(b *testing.B) {
		a, _ := NewAccessLog(io.Discard, &static.AccessLog{Format: "json"})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		run(b, Tee(base(), a), nil)
		cancel()
		<-done
	})
	for _, rate := range []float64{1, 0.01} {
		b.Run("+tracing-"+strconv.FormatFloat(rate, 'g', -1, 64), func(b *testing.B) {
			tr := newTracing(&static.Tracing{}, rate, &discard{})
			run(b, base(), tr)
			_ = tr.Shutdown(context.Background())
		})
	}
}
