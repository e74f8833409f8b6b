package observe

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Trace is the spans of one request; End finishes them.
//
// Each span's attributes are collected here and set once, when it ends: a
// recording span's attribute slice grows (a copy) on every SetAttributes.
type Trace struct {
	t             *Tracing
	entry, router trace.Span
	routerCtx     context.Context // the Router span's: parent of each attempt
	client        trace.Span      // the attempt in progress; nil between attempts
	entryAttrs    []attribute.KeyValue
	clientAttrs   []attribute.KeyValue // the attempt's; the array is reused by the next
	// unsampled is the IDs of a new trace that was not sampled (begin):
	// entry is nil then.
	unsampled trace.SpanContext
	// rawQuery and safeQuery are the request's query and its redaction,
	// computed once for the EntryPoint span and reused by each attempt.
	rawQuery, safeQuery string
}

// Start begins the spans of r, routed by router (rule, to service) on
// entryPoint: EntryPoint (server) ← Router. It returns r with their
// context; each try on a server then adds a ReverseProxy (client) span
// (Attempt). Requests to Gantry's own services are not traced unless
// tracing.addInternals (Traefik's default); Start then returns r and nil.
func (t *Tracing) Start(r *http.Request, entryPoint, router, rule, service string) (*http.Request, *Trace) {
	if !t.addInternals && (strings.HasSuffix(service, "@internal") || strings.HasSuffix(router, "@internal")) {
		return r, nil
	}
	ctx, tr := t.begin(r)
	if tr != nil {
		return r, tr // not sampled
	}
	start := time.Now()
	tr = &Trace{t: t}
	ctx, tr.entry = t.tracer.Start(ctx, SpanEntryPoint, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
	if !tr.entry.IsRecording() {
		// A caller's unsampled trace: the Router and ReverseProxy spans
		// would not be sampled either (parent-based), so none is made; the
		// server continues the trace (flags 00) from this span's context.
		tr.routerCtx = ctx
		return r, tr
	}
	tr.entryAttrs = t.serverAttributes(tr, r, entryPoint)
	ctx, tr.router = t.tracer.Start(ctx, SpanRouter, trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(start))
	if tr.router.IsRecording() {
		tr.router.SetAttributes(
			attribute.String("traefik.service.name", service),
			attribute.String("traefik.router.name", router),
			semconv.HTTPRoute(rule))
	}
	tr.routerCtx = ctx
	return r.WithContext(ctx), tr
}

// StartUnrouted begins the EntryPoint span of a request no router matched
// on entryPoint (Traefik traces every request at the entrypoint, before
// routing): End finishes it with the status answered (404, or the
// entrypoint's notFound page).
func (t *Tracing) StartUnrouted(r *http.Request, entryPoint string) *Trace {
	ctx, tr := t.begin(r)
	if tr != nil {
		return tr
	}
	tr = &Trace{t: t}
	_, tr.entry = t.tracer.Start(ctx, SpanEntryPoint, trace.WithSpanKind(trace.SpanKindServer))
	if tr.entry.IsRecording() {
		tr.entryAttrs = t.serverAttributes(tr, r, entryPoint)
	}
	return tr
}

// Attempt begins the ReverseProxy (client) span of one try of r on the
// server upstream (a URL), a child of the Router span, and sets r's
// traceparent (and tracestate, baggage) to it, so the server continues the
// trace from this attempt. A retry makes a new span: each try is one, as
// each of Traefik's round trips is. AttemptDone ends it.
func (tr *Trace) Attempt(r *http.Request, upstream string) {
	if tr == nil {
		return
	}
	if tr.entry == nil { // a new trace, not sampled: see begin
		if tr.routerCtx != nil { // the caller's baggage goes on
			tr.t.prop.Inject(tr.routerCtx, propagation.HeaderCarrier(r.Header))
		} else {
			r.Header["Traceparent"] = []string{traceparent(tr.unsampled)}
			delete(r.Header, "Tracestate")
		}
		return
	}
	if tr.routerCtx == nil {
		return
	}
	if tr.client != nil {
		tr.client.End()
	}
	if tr.router == nil { // not sampled: see Start
		tr.t.prop.Inject(tr.routerCtx, propagation.HeaderCarrier(r.Header))
		return
	}
	ctx, span := tr.t.tracer.Start(tr.routerCtx, SpanReverseProxy, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		tr.clientAttrs = tr.t.clientAttributes(tr, tr.clientAttrs[:0], r, upstream)
	}
	tr.t.prop.Inject(ctx, propagation.HeaderCarrier(r.Header))
	tr.client = span
}

// AttemptDone ends the attempt's span: status is the server's answer, or
// what its failure maps to (502, 504; 0: none), err the failure (nil when
// the exchange completed), h the response headers (captured ones become
// attributes).
func (tr *Trace) AttemptDone(status int, h http.Header, err error) {
	if tr == nil || tr.client == nil {
		return
	}
	if tr.client.IsRecording() {
		var code codes.Code
		var desc string
		tr.clientAttrs, code, desc = statusAttrs(tr.clientAttrs, status, trace.SpanKindClient, h, tr.t.respHeaders)
		if err != nil {
			code, desc = codes.Error, err.Error()
		}
		tr.client.SetAttributes(tr.clientAttrs...) // copied: the slice is ours again
		if code != codes.Unset {
			tr.client.SetStatus(code, desc)
		}
		clear(tr.clientAttrs)
	}
	tr.client.End()
	tr.client = nil
}

// End finishes the spans with what the request came to (the status sent,
// the response headers); it sets ev.TraceID and ev.SpanID to the
// EntryPoint span's.
func (tr *Trace) End(ev *RequestEvent) {
	if tr == nil {
		return
	}
	if tr.entry == nil { // not sampled: see begin
		ev.TraceID, ev.SpanID = tr.unsampled.TraceID(), tr.unsampled.SpanID()
		return
	}
	end := time.Now()
	t := tr.t
	if tr.client != nil { // an attempt aborted by a panic
		tr.client.End(trace.WithTimestamp(end))
		tr.client = nil
	}
	if tr.router != nil {
		tr.router.End(trace.WithTimestamp(end))
	}
	if tr.entry.IsRecording() {
		attrs, code, desc := statusAttrs(tr.entryAttrs, ev.Status, trace.SpanKindServer, ev.ResponseHeader, t.respHeaders)
		tr.entry.SetAttributes(attrs...) // copied: the slice goes back to the pool
		if code != codes.Unset {
			tr.entry.SetStatus(code, desc)
		}
		putAttrs(attrs)
	}
	putAttrs(tr.clientAttrs)
	tr.entryAttrs, tr.clientAttrs = nil, nil
	tr.entry.End(trace.WithTimestamp(end))
	if sc := tr.entry.SpanContext(); sc.IsValid() {
		ev.TraceID, ev.SpanID = sc.TraceID(), sc.SpanID()
	}
}

// begin extracts r's trace context (traceparent, tracestate, baggage) when
// it has one. A request that starts a trace is sampled here, with
// probability tracing.sampleRate, before the SDK sees it (its sampler
// samples every root: ParentBased(AlwaysSample)); when it is not sampled,
// begin returns its Trace: no span is made, only the IDs the server's
// traceparent (flags 00) and the access log carry. Otherwise the Trace is
// nil and ctx is the context to start the EntryPoint span in.
func (t *Tracing) begin(r *http.Request) (context.Context, *Trace) {
	ctx := r.Context()
	if len(r.Header["Traceparent"]) > 0 || len(r.Header["Baggage"]) > 0 {
		ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	if trace.SpanContextFromContext(ctx).IsValid() || t.sampleRoot() {
		return ctx, nil
	}
	tr := &Trace{t: t, unsampled: trace.NewSpanContext(trace.SpanContextConfig{TraceID: newTraceID(), SpanID: newSpanID()})}
	if len(r.Header["Baggage"]) > 0 {
		tr.routerCtx = trace.ContextWithSpanContext(ctx, tr.unsampled)
	}
	return nil, tr
}

// traceparent is the W3C traceparent header of sc, not sampled
// (https://www.w3.org/TR/trace-context/#traceparent-header): version 00,
// trace ID, parent ID, flags 00.
func traceparent(sc trace.SpanContext) string {
	var b [55]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	copy(b[:], "00-")
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	copy(b[52:], "-00")
	return string(b[:])
}

// sampleRoot draws whether a new trace is sampled (tracing.sampleRate).
func (t *Tracing) sampleRoot() bool {
	switch {
	case t.rate >= 1:
		return true
	case t.rate <= 0:
		return false
	}
	return rand.Float64() < t.rate
}

// newTraceID and newSpanID are random non-zero IDs (W3C Trace Context
// §3.2.2.3, §3.2.2.4: all zeros is invalid).
func newTraceID() (id trace.TraceID) {
	for id == (trace.TraceID{}) {
		binary.LittleEndian.PutUint64(id[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(id[8:], rand.Uint64())
	}
	return id
}

func newSpanID() (id trace.SpanID) {
	for id == (trace.SpanID{}) {
		binary.LittleEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}
