package observe

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/gantry-proxy/gantry/config/static"
)

// tracedRequests sends n requests through tr, each different (path,
// query, a captured header; every third continuing a caller's sampled
// trace with a tracestate; every fourth tried twice, the first try
// failing; statuses 200, 404, 503) and ends them.
func tracedRequests(tr *Tracing, n int) {
	for i := range n {
		r := httptest.NewRequest("GET", fmt.Sprintf("http://app.example/p%d?keep=%d&drop=x", i, i), nil)
		r.Header.Set("X-Req", fmt.Sprintf("v%d", i))
		if i%3 == 0 {
			r.Header.Set("Traceparent", fmt.Sprintf("00-0af7651916cd43dd8448eb211c8031%02x-b7ad6b71692033%02x-01", i, i))
			r.Header.Set("Tracestate", fmt.Sprintf("vendor=v%d", i))
		}
		r, trace := tr.Start(r, "web", "app@file", "Host(`app.example`)", "app@file")
		if i%4 == 0 {
			trace.Attempt(r, "http://10.0.0.1:8080")
			trace.AttemptDone(502, nil, fmt.Errorf("dial %d: refused", i))
		}
		status := []int{200, 404, 503}[i%3]
		trace.Attempt(r, "http://10.0.0.2:8080")
		h := http.Header{"X-Resp": {fmt.Sprint(i)}}
		trace.AttemptDone(status, h, nil)
		ev := event("app@file", status, time.Millisecond)
		ev.ResponseHeader = h
		trace.End(ev)
	}
}

// bodyRecorder keeps a copy of each export request body posted to it
// (post); read bodies after Shutdown.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *bodyRecorder) post(_ context.Context, body []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, slices.Clone(body))
	return nil
}

// keepSpans is a SpanExporter that keeps every span it is given.
type keepSpans struct{ spans []sdktrace.ReadOnlySpan }

func (k *keepSpans) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	k.spans = append(k.spans, s...)
	return nil
}
func (k *keepSpans) Shutdown(context.Context) error { return nil }

// exportedSpans decodes export request bodies into their spans, in order,
// with times cleared and each trace and span ID replaced by the order in
// which it first appears (a parent ID from a caller keeps its value), so
// that two runs of the same requests compare equal. It fails t when a
// body's resource or scope is not Gantry's.
func exportedSpans(t *testing.T, bodies [][]byte) []*tracepb.Span {
	t.Helper()
	var spans []*tracepb.Span
	ids := map[string][]byte{}
	renumber := func(id []byte) []byte {
		if len(id) == 0 {
			return id
		}
		if n, ok := ids[string(id)]; ok {
			return n
		}
		n := []byte{byte(len(ids) >> 8), byte(len(ids))}
		ids[string(id)] = n
		return n
	}
	for _, b := range bodies {
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Fatalf("the body is not an ExportTraceServiceRequest: %v", err)
		}
		for _, rs := range req.ResourceSpans {
			if got := rs.Resource.Attributes[0].Value.GetStringValue(); got != DefaultTracingServiceName {
				t.Errorf("resource service.name %q", got)
			}
			for _, ss := range rs.ScopeSpans {
				if ss.Scope.Name != "github.com/gantry-proxy/gantry" {
					t.Errorf("scope %q", ss.Scope.Name)
				}
				spans = append(spans, ss.Spans...)
			}
		}
	}
	for _, s := range spans {
		s.StartTimeUnixNano, s.EndTimeUnixNano = 0, 0
		s.TraceId, s.SpanId = renumber(s.TraceId), renumber(s.SpanId)
	}
	for _, s := range spans { // a parent may end after its child
		if n, ok := ids[string(s.ParentSpanId)]; ok {
			s.ParentSpanId = n
		}
	}
	return spans
}

// TestSpansEncodedWhenEndedAsWhenExported: Gantry's exporter sends spans
// encoded when they ended, from spans reused batch after batch; what it
// sends equals the encoding, at export, of the same requests' spans kept
// by an exporter that keeps them (never reused). A span reused while
// queued, or an encoding kept from its previous use, fails it. Without
// global attributes and captured headers Gantry's exporter's spans encode
// their attributes as they are set (span.direct), the kept ones do not:
// the attribute limits must come out the same both ways.
func TestSpansEncodedWhenEndedAsWhenExported(t *testing.T) {
	captured := &static.Tracing{
		CapturedRequestHeaders: []string{"X-Req"}, CapturedResponseHeaders: []string{"X-Resp"},
		SafeQueryParams: []string{"keep"}, GlobalAttributes: map[string]string{"zone": "z1"},
	}
	plain := &static.Tracing{SafeQueryParams: []string{"keep"}}
	for _, tc := range []struct {
		name          string
		c             *static.Tracing
		direct        bool
		count, length string // OTEL_SPAN_ATTRIBUTE_{COUNT,VALUE_LENGTH}_LIMIT
	}{
		{"captured", captured, false, "", ""},
		{"direct", plain, true, "", ""},
		{"direct-limited", plain, true, "7", "5"},
		{"direct-none", plain, true, "0", "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4") // many exports, spans reused from the first ones
			t.Setenv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", tc.count)
			t.Setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", tc.length)
			rec := &bodyRecorder{}
			own := &spanExporter{post: rec.post}
			tr := newTracing(tc.c, 1, own)
			if tr.direct != tc.direct {
				t.Fatalf("direct %v, want %v", tr.direct, tc.direct)
			}
			const n = 60
			tracedRequests(tr, n)
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if tr.batch.free == nil || len(tr.batch.free.spans) == 0 {
				t.Fatal("no span was kept for reuse")
			}

			kept := &keepSpans{}
			ref := newTracing(tc.c, 1, kept)
			tracedRequests(ref, n)
			if err := ref.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			whole, _ := appendExportRequest(nil, kept.spans, nil)

			bodies := rec.bodies
			got, want := exportedSpans(t, bodies), exportedSpans(t, [][]byte{whole})
			if len(bodies) < 10 || len(got) != len(want) || len(want) != n*3+(n+3)/4 {
				t.Fatalf("%d spans in %d exports, want %d spans as the reference's %d", len(got), len(bodies), n*3+(n+3)/4, len(want))
			}
			for i := range want {
				if !proto.Equal(got[i], want[i]) {
					t.Fatalf("span %d differs:\nsent:      %v\nreference: %v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestSimpleSafeQueryAsURLValues: the redacted query made without
// url.Values (simpleSafeQuery) is url.Values' (parse, redact the values
// of keys not safe, encode), on chosen and random queries; the plain
// short ones take that way.
func TestSimpleSafeQueryAsURLValues(t *testing.T) {
	tr := &Tracing{safeQuery: []string{"a", "keep"}}
	viaValues := func(raw string) string {
		q, _ := url.ParseQuery(raw)
		for k := range q {
			if !slices.Contains(tr.safeQuery, k) {
				q.Set(k, Redacted)
			}
		}
		return q.Encode()
	}
	queries := []string{"q=1", "b=2&a=1&a=0&b=3", "keep=x&keep=y&z", "=v&a", "a=b=c", "b=c=d", "&&a=1&",
		"a=%41", "a+b=1", "x;y=1", "keep=1&keep=2&b=1&c&d&e&f&g", "keep=1&keep=2&b=1&c&d&e&f&g&h", "a.b~c_d-e=F-9"}
	for _, raw := range []string{"q=1", "b=2&a=1&a=0&b=3", "keep=x&keep=y&z", "=v&a", "&&a=1&", "keep=1&keep=2&b=1&c&d&e&f&g"} {
		if _, ok := tr.simpleSafeQuery(raw); !ok {
			t.Errorf("%q: not redacted the simple way", raw)
		}
	}
	tokens := []string{"a", "b", "keep", "k", "=", "=", "&", "&", "1", "x.y", "~", "%41", "%zz", "+", ";", "Z_-"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(14) {
			b.WriteString(tokens[rng.IntN(len(tokens))])
		}
		queries = append(queries, b.String())
	}
	simple := 0
	for _, raw := range queries {
		if got, want := tr.safeRawQuery(raw), viaValues(raw); got != want {
			t.Fatalf("%q redacted to %q, url.Values: %q", raw, got, want)
		}
		if _, ok := tr.simpleSafeQuery(raw); ok {
			simple++
		}
	}
	if simple < len(queries)/4 {
		t.Errorf("%d of %d queries redacted the simple way", simple, len(queries))
	}
}

// TestDroppedSpansReusedUnencoded: with the queue full, an ended span is
// dropped without being encoded and kept for reuse at once; the queued
// spans are all exported.
func TestDroppedSpansReusedUnencoded(t *testing.T) {
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "2")
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "2")
	gate, entered := make(chan struct{}), make(chan struct{}, 4)
	var bodies [][]byte // read after Shutdown
	own := &spanExporter{post: func(_ context.Context, body []byte) error {
		entered <- struct{}{}
		<-gate
		bodies = append(bodies, slices.Clone(body))
		return nil
	}}
	tr := newTracing(&static.Tracing{}, 1, own)
	end := func() *span {
		s := tr.startSpan(SpanRouter, trace.SpanKindInternal, trace.SpanContext{}, time.Now())
		s.finish(time.Time{})
		return s
	}
	end()
	end()
	<-entered // the first batch is being exported
	end()
	end() // the queue is full again
	dropped := end()
	if tr.batch.Dropped() != 1 {
		t.Fatalf("%d spans dropped, want 1", tr.batch.Dropped())
	}
	if len(dropped.enc) != 0 {
		t.Error("a span dropped for the full queue was encoded")
	}
	if f := tr.batch.free; len(f.spans) != 1 || f.spans[0] != dropped {
		t.Errorf("free list %v: want the dropped span, kept for reuse", f.spans)
	}
	close(gate)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(exportedSpans(t, bodies)); n != 4 {
		t.Errorf("%d spans exported, want the 4 queued", n)
	}
}

// TestConcurrentTracesExportConsistent: requests traced at once from many
// goroutines, with spans reused batch after batch, each export what its
// own request set: every span of a trace has its EntryPoint span, a
// client span's URL and a router span's parent are those of that span. A
// span reused while still queued or referenced mixes requests up.
func TestConcurrentTracesExportConsistent(t *testing.T) {
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "65536") // none dropped
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "8")
	rec := &bodyRecorder{}
	own := &spanExporter{post: rec.post}
	tr := newTracing(&static.Tracing{}, 1, own)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				r := httptest.NewRequest("GET", fmt.Sprintf("http://app.example/g%d/r%d", g, i), nil)
				r, trace := tr.Start(r, "web", "app@file", "Host(`app.example`)", "app@file")
				trace.Attempt(r, "http://10.0.0.1:8080")
				trace.AttemptDone(200, nil, nil)
				trace.End(event("app@file", 200, time.Millisecond))
			}
		})
	}
	wg.Wait()
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	attr := func(s *tracepb.Span, key string) string {
		for _, a := range s.Attributes {
			if a.Key == key {
				return a.Value.GetStringValue()
			}
		}
		return ""
	}
	spans := exportedSpans(t, rec.bodies) // IDs renumbered alike
	entries := map[string]*tracepb.Span{}
	for _, s := range spans {
		if s.Name == SpanEntryPoint {
			entries[string(s.TraceId)] = s
		}
	}
	if len(spans) != 8*200*3 || len(entries) != 8*200 {
		t.Fatalf("%d spans exported, %d traces with an EntryPoint span; want %d and %d", len(spans), len(entries), 8*200*3, 8*200)
	}
	for _, s := range spans {
		e := entries[string(s.TraceId)]
		if e == nil {
			t.Fatalf("span %s %x: no EntryPoint span in its trace %x", s.Name, s.SpanId, s.TraceId)
		}
		switch s.Name {
		case SpanRouter:
			if string(s.ParentSpanId) != string(e.SpanId) {
				t.Fatalf("router span %x: parent %x, its trace's EntryPoint span %x", s.SpanId, s.ParentSpanId, e.SpanId)
			}
		case SpanReverseProxy:
			if want := "http://10.0.0.1:8080" + attr(e, "url.path"); attr(s, "url.full") != want {
				t.Fatalf("client span url.full %q, its trace's EntryPoint span says %q", attr(s, "url.full"), want)
			}
		}
	}
}
