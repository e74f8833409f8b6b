package observe

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
// log written to a file, plus tracing sampled at 1.0 and at 0.01 (spans to
// a discarding exporter), plus tracing at 1.0 through Gantry's OTLP
// encoding (the POST left out). Compare cpu-ns/op (the process's user and system
// CPU per request, getrusage: the writer and exporter goroutines included,
// unlike ns/op) and allocs/op between the sub-benchmarks.
func BenchmarkObserveOverhead(b *testing.B) {
	base := func() Observer {
		return Tee(NewLive(), NewMetrics(MetricsOptions{}))
	}
	run := func(b *testing.B, obs Observer, tr *Tracing) {
		req := httptest.NewRequest("GET", "http://app.example/x?y=1", nil)
		req.Header.Set("User-Agent", "bench")
		ev := event("app@file", 200, time.Millisecond)
		b.ReportAllocs()
		c0 := cpuTime(b)
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
		b.ReportMetric(float64(cpuTime(b)-c0)/float64(b.N), "cpu-ns/op")
	}
	b.Run("stats+metrics", func(b *testing.B) { run(b, base(), nil) })
	b.Run("+accesslog-json-file", func(b *testing.B) {
		f, err := OpenFile(filepath.Join(b.TempDir(), "access.log"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		a, _ := NewAccessLog(f, &static.AccessLog{Format: "json"})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx) }()
		run(b, Tee(base(), a), nil)
		cancel()
		<-done
		if a.Dropped() > 0 {
			b.Logf("%d of %d lines dropped", a.Dropped(), b.N)
		}
	})
	for _, rate := range []float64{1, 0.01} {
		b.Run("+tracing-"+strconv.FormatFloat(rate, 'g', -1, 64), func(b *testing.B) {
			tr := newTracing(&static.Tracing{}, rate, &discard{})
			run(b, base(), tr)
			_ = tr.Shutdown(context.Background())
		})
	}
	b.Run("+tracing-1-otlp-encoded", func(b *testing.B) { // Gantry's exporter, the POST left out
		tr := newTracing(&static.Tracing{}, 1, &spanExporter{post: func(context.Context, []byte) error { return nil }})
		run(b, base(), tr)
		_ = tr.Shutdown(context.Background())
	})
}

// cpuTime is the process's user plus system CPU time so far (getrusage).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestUnsampledRequestsMakeNoSpan: at sampleRate 0 a new request makes no
// span (nothing exported, two small allocations: the Trace and the
// traceparent header), its server still gets a traceparent (flags 00)
// naming the IDs the access log records; a caller's sampled trace is
// continued (and sampled) whatever the rate, a malformed traceparent
// starts a new trace, sampled at the rate; at 0.5 about half the new
// traces are sampled.
func TestUnsampledRequestsMakeNoSpan(t *testing.T) {
	exp := &discard{}
	tr := newTracing(&static.Tracing{}, 0, exp)
	run := func(h map[string]string) (traceparent string, ev *RequestEvent) {
		r := httptest.NewRequest("GET", "http://app.example/x", nil)
		for k, v := range h {
			r.Header.Set(k, v)
		}
		r, trace := tr.Start(r, "web", "app@file", "Host(`app.example`)", "app@file")
		trace.Attempt(r, "http://10.0.0.1:8080")
		trace.AttemptDone(200, nil, nil)
		ev = event("app@file", 200, time.Millisecond)
		trace.End(ev)
		return r.Header.Get("Traceparent"), ev
	}
	tp, ev := run(nil)
	want := "00-" + hex.EncodeToString(ev.TraceID[:]) + "-" + hex.EncodeToString(ev.SpanID[:]) + "-00"
	if tp != want || ev.TraceID == ([16]byte{}) {
		t.Errorf("traceparent %q, want %q (the access log's IDs, not sampled)", tp, want)
	}
	if _, bad := run(map[string]string{"Traceparent": "00-zz-00"}); bad.TraceID == ([16]byte{}) {
		t.Error("a malformed traceparent got no trace IDs")
	}
	req := httptest.NewRequest("GET", "http://app.example/x", nil)
	allocs := testing.AllocsPerRun(200, func() {
		r, trace := tr.Start(req, "web", "app@file", "Host(`app.example`)", "app@file")
		trace.Attempt(r, "http://10.0.0.1:8080")
		trace.AttemptDone(200, nil, nil)
		trace.End(ev)
		delete(req.Header, "Traceparent")
	})
	parent := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	tp, ev = run(map[string]string{"Traceparent": parent})
	if !strings.HasPrefix(tp, "00-0af7651916cd43dd8448eb211c80319c-") || !strings.HasSuffix(tp, "-01") {
		t.Errorf("a sampled caller's trace: traceparent %q, want its trace ID and flags 01", tp)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if exp.n != 3 {
		t.Errorf("%d spans exported, want 3 (only the sampled caller's request)", exp.n)
	}
	if allocs > 2 {
		t.Errorf("%v allocations per unsampled request, want at most 2 (the Trace and its traceparent: no span)", allocs)
	}

	half := &discard{}
	tr = newTracing(&static.Tracing{}, 0.5, half)
	const n = 2000
	for range n {
		run(nil)
	}
	_ = tr.Shutdown(context.Background())
	if sampled := half.n / 3; sampled < n/2-200 || sampled > n/2+200 {
		t.Errorf("%d of %d new traces sampled at rate 0.5", sampled, n)
	}
}
