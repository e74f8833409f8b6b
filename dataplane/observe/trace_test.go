package observe

import (
	"context"
	"encoding/hex"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/gantry-proxy/gantry/config/static"
)

// TestParseTraceparentAgreesWithOTel: Gantry's own traceparent parser (the
// path of requests it does not sample) accepts exactly what the
// OpenTelemetry propagator accepts, with the same IDs and flags.
func TestParseTraceparentAgreesWithOTel(t *testing.T) {
	const tid, sid = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	for _, h := range []string{
		"00-" + tid + "-" + sid + "-01",
		"00-" + tid + "-" + sid + "-00",
		"00-" + tid + "-" + sid + "-02",
		"00-" + tid + "-" + sid + "-03",
		"00-" + tid + "-" + sid + "-04",                      // reserved flag in version 00
		"00-" + tid + "-" + sid + "-01-extra",                // version 00 has no more fields
		"01-" + tid + "-" + sid + "-09-extra",                // a later version may
		"01-" + tid + "-" + sid + "-09",                      // later version, exact length
		"01-" + tid + "-" + sid + "-09x",                     // not a field separator
		"fe-" + tid + "-" + sid + "-01",                      // highest allowed version
		"ff-" + tid + "-" + sid + "-01",                      // version ff is invalid
		"00-0AF7651916CD43DD8448EB211C80319C-" + sid + "-01", // upper case
		"00-00000000000000000000000000000000-" + sid + "-01", // zero trace ID
		"00-" + tid + "-0000000000000000-01",                 // zero parent ID
		"00-" + tid + "-" + sid + "-0",
		"00-" + tid + "-" + sid,
		"0-" + tid + "-" + sid + "-01",
		"00-" + tid[1:] + "x-" + sid + "-01",
		"00_" + tid + "-" + sid + "-01",
		"",
		"garbage",
	} {
		got, ok := parseTraceparent([]string{h})
		r := httptest.NewRequest("GET", "http://x/", nil)
		r.Header.Set("Traceparent", h)
		sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(r.Header)))
		if ok != sc.IsValid() {
			t.Errorf("%q: valid %v, OpenTelemetry says %v", h, ok, sc.IsValid())
			continue
		}
		if ok && (got.traceID != sc.TraceID() || got.spanID != sc.SpanID() || got.flags != byte(sc.TraceFlags())) {
			t.Errorf("%q: parsed %x %x %02x, OpenTelemetry %s %s %s", h, got.traceID, got.spanID, got.flags, sc.TraceID(), sc.SpanID(), sc.TraceFlags())
		}
	}
}

// TestUnsampledCallerTraceContinued: a caller's trace that is not sampled
// (flags 00) makes no span even at sample rate 1 (parent-based); its
// server gets the caller's trace ID with a new parent ID, the one the
// access log records, the caller's random flag, and the caller's
// tracestate and baggage as they came. A new trace that is not sampled
// drops a caller's tracestate (it belongs to no trace sent on).
func TestUnsampledCallerTraceContinued(t *testing.T) {
	exp := &discard{}
	tr := newTracing(&static.Tracing{}, 1, exp)
	const tid, sid = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	for _, flags := range []string{"00", "02"} {
		r := httptest.NewRequest("GET", "http://app.example/x", nil)
		r.Header.Set("Traceparent", "00-"+tid+"-"+sid+"-"+flags)
		r.Header["Tracestate"] = []string{"vendor=a, other=b", "third=c"}
		r.Header.Set("Baggage", "user=42;p=1")
		r, trc := tr.Start(r, "web", "app@file", "Host(`app.example`)", "app@file")
		trc.Attempt(r, "http://10.0.0.1:8080")
		trc.AttemptDone(200, nil, nil)
		ev := event("app@file", 200, time.Millisecond)
		trc.End(ev)
		want := "00-" + tid + "-" + hex.EncodeToString(ev.SpanID[:]) + "-" + flags
		if got := r.Header.Get("Traceparent"); got != want || hex.EncodeToString(ev.TraceID[:]) != tid || hex.EncodeToString(ev.SpanID[:]) == sid {
			t.Errorf("flags %s: traceparent %q, want %q (the caller's trace, a new parent ID)", flags, got, want)
		}
		if got := r.Header["Tracestate"]; len(got) != 2 || got[0] != "vendor=a, other=b" || got[1] != "third=c" {
			t.Errorf("tracestate %q, want the caller's as it came", got)
		}
		if got := r.Header.Get("Baggage"); got != "user=42;p=1" {
			t.Errorf("baggage %q, want the caller's", got)
		}
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if exp.n != 0 {
		t.Errorf("%d spans exported for a caller's unsampled trace, want 0", exp.n)
	}

	tr = newTracing(&static.Tracing{}, 0, exp)
	r := httptest.NewRequest("GET", "http://app.example/x", nil)
	r.Header.Set("Traceparent", "00-"+tid+"-"+sid) // malformed: a new trace
	r.Header.Set("Tracestate", "vendor=a")
	r.Header.Set("Baggage", "user=42")
	r, trc := tr.Start(r, "web", "app@file", "", "app@file")
	trc.Attempt(r, "http://10.0.0.1:8080")
	ev := event("app@file", 200, time.Millisecond)
	trc.End(ev)
	want := "00-" + hex.EncodeToString(ev.TraceID[:]) + "-" + hex.EncodeToString(ev.SpanID[:]) + "-00"
	if got := r.Header.Get("Traceparent"); got != want || hex.EncodeToString(ev.TraceID[:]) == tid {
		t.Errorf("malformed caller traceparent: sent %q, want a new trace %q", got, want)
	}
	if _, ok := r.Header["Tracestate"]; ok || r.Header.Get("Baggage") != "user=42" {
		t.Errorf("new trace: tracestate %q (want none), baggage %q (want the caller's)", r.Header["Tracestate"], r.Header.Get("Baggage"))
	}
	_ = tr.Shutdown(context.Background())
}

// BenchmarkUnsampled is the tracing work of one request that is not
// sampled (sample rate 0): a new trace, and a caller's trace with flags
// 00, each with one attempt.
func BenchmarkUnsampled(b *testing.B) {
	tr := newTracing(&static.Tracing{}, 0, &discard{})
	defer func() { _ = tr.Shutdown(context.Background()) }()
	for _, parent := range []string{"", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"} {
		name := "new"
		if parent != "" {
			name = "caller"
		}
		b.Run(name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "http://app.example/x", nil)
			ev := event("app@file", 200, time.Millisecond)
			b.ReportAllocs()
			for b.Loop() {
				if parent != "" {
					req.Header["Traceparent"] = []string{parent}
				}
				r, trc := tr.Start(req, "web", "app@file", "Host(`app.example`)", "app@file")
				trc.Attempt(r, "http://10.0.0.1:8080")
				trc.AttemptDone(200, nil, nil)
				trc.End(ev)
				delete(req.Header, "Traceparent")
			}
		})
	}
}

// TestSampledAttemptPropagation: the server of a sampled caller's request
// gets traceparent version 00 with the caller's trace ID, its attempt's
// span as parent and the caller's sampled and random flags, and the
// caller's tracestate (as the OpenTelemetry propagator writes them).
func TestSampledAttemptPropagation(t *testing.T) {
	tr := newTracing(&static.Tracing{}, 0, &discard{})
	defer func() { _ = tr.Shutdown(context.Background()) }()
	const tid, sid = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	r := httptest.NewRequest("GET", "http://app.example/x", nil)
	r.Header.Set("Traceparent", "00-"+tid+"-"+sid+"-03")
	r.Header.Set("Tracestate", "vendor=a,other=b")
	r, trc := tr.Start(r, "web", "app@file", "Host(`app.example`)", "app@file")
	trc.Attempt(r, "http://10.0.0.1:8080")
	got := r.Header.Get("Traceparent")
	parent := trc.client.SpanContext().SpanID()
	trc.AttemptDone(200, nil, nil)
	trc.End(event("app@file", 200, time.Millisecond))
	if want := "00-" + tid + "-" + hex.EncodeToString(parent[:]) + "-03"; got != want {
		t.Errorf("traceparent %q, want %q (the attempt's span, the caller's flags)", got, want)
	}
	if ts := r.Header.Get("Tracestate"); ts != "vendor=a,other=b" {
		t.Errorf("tracestate %q, want the caller's", ts)
	}
}
