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
//
// A request that is not sampled (begin) makes no span: entry is nil, and
// the Trace holds only the IDs its server's traceparent and the access log
// carry.
type Trace struct {
	t             *Tracing
	entry, router trace.Span
	routerCtx     context.Context // the Router span's: parent of each attempt
	client        trace.Span      // the attempt in progress; nil between attempts
	attrs         *attrBufs       // from attrPool while the spans are open
	entryAttrs    []attribute.KeyValue
	clientAttrs   []attribute.KeyValue // the attempt's; the array is reused by the next
	// rawQuery and safeQuery are the request's query and its redaction,
	// computed once for the EntryPoint span and reused by each attempt.
	rawQuery, safeQuery string

	// Not sampled: traceID is the caller's trace (continued) or a new one,
	// spanID the EntryPoint span's that is not recorded, flags the
	// traceparent flags sent on (the caller's random bit; never sampled).
	traceID   trace.TraceID
	spanID    trace.SpanID
	flags     byte
	continued bool      // the caller's trace: its tracestate goes on
	tp        [1]string // the traceparent sent, made by the first attempt
}

// Start begins the spans of r, routed by router (rule, to service) on
// entryPoint: EntryPoint (server) ← Router. It returns r as it came (the
// spans' context stays in the Trace: nothing downstream reads it from the
// request, and a request copy per traced request is saved); each try on a
// server then adds a ReverseProxy (client) span (Attempt). Requests to Gantry's own services are not traced unless
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
	ctx, tr.entry = t.tracer.Start(ctx, SpanEntryPoint, serverKind, trace.WithTimestamp(start))
	tr.entryAttrs = t.serverAttributes(tr, r, entryPoint)
	ctx, tr.router = t.tracer.Start(ctx, SpanRouter, internalKind, trace.WithTimestamp(start))
	if tr.router.IsRecording() {
		tr.router.SetAttributes(
			attribute.String("traefik.service.name", service),
			attribute.String("traefik.router.name", router),
			semconv.HTTPRoute(rule))
	}
	tr.routerCtx = ctx
	return r, tr
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
	_, tr.entry = t.tracer.Start(ctx, SpanEntryPoint, serverKind)
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
	if tr.entry == nil { // not sampled: see begin
		if tr.tp[0] == "" {
			tr.tp[0] = traceparent(tr.traceID, tr.spanID, tr.flags)
		}
		r.Header["Traceparent"] = tr.tp[:]
		if !tr.continued { // a new trace: a caller's state belongs to no trace sent on
			delete(r.Header, "Tracestate")
		}
		return // baggage is the caller's, forwarded as it came
	}
	if tr.routerCtx == nil { // an unrouted request's trace: no attempt
		return
	}
	if tr.client != nil {
		tr.client.End()
	}
	_, span := tr.t.tracer.Start(tr.routerCtx, SpanReverseProxy, clientKind)
	if span.IsRecording() {
		tr.bufs()
		tr.clientAttrs = tr.t.clientAttributes(tr, tr.clientAttrs, r, upstream)
	}
	inject(span.SpanContext(), r.Header)
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

// The span kinds, made once: each option is an interface value.
var (
	serverKind   = trace.WithSpanKind(trace.SpanKindServer)
	internalKind = trace.WithSpanKind(trace.SpanKindInternal)
	clientKind   = trace.WithSpanKind(trace.SpanKindClient)
)

// inject sets h's traceparent to sc (version 00, its sampled and random
// flags) and its tracestate to sc's, when it has one, as the
// OpenTelemetry TraceContext propagator does; baggage, the caller's, goes
// on as it came. The keys are the canonical ones: nothing is looked up.
func inject(sc trace.SpanContext, h http.Header) {
	if !sc.IsValid() {
		return
	}
	if ts := sc.TraceState(); ts.Len() > 0 {
		h["Tracestate"] = []string{ts.String()}
	}
	h["Traceparent"] = []string{traceparentFlags(sc.TraceID(), sc.SpanID(), byte(sc.TraceFlags())&(flagSampled|flagRandom))}
}

// End finishes the spans with what the request came to (the status sent,
// the response headers); it sets ev.TraceID and ev.SpanID to the
// EntryPoint span's.
func (tr *Trace) End(ev *RequestEvent) {
	if tr == nil {
		return
	}
	if tr.entry == nil { // not sampled: see begin
		ev.TraceID, ev.SpanID = tr.traceID, tr.spanID
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
		var code codes.Code
		var desc string
		tr.entryAttrs, code, desc = statusAttrs(tr.entryAttrs, ev.Status, trace.SpanKindServer, ev.ResponseHeader, t.respHeaders)
		tr.entry.SetAttributes(tr.entryAttrs...) // copied: the slice goes back to the pool
		if code != codes.Unset {
			tr.entry.SetStatus(code, desc)
		}
	}
	tr.releaseAttrs()
	tr.entry.End(trace.WithTimestamp(end))
	if sc := tr.entry.SpanContext(); sc.IsValid() {
		ev.TraceID, ev.SpanID = sc.TraceID(), sc.SpanID()
	}
}

// begin decides whether r is sampled. A request continuing a caller's
// sampled trace (a valid traceparent with the sampled flag) is; one
// starting a trace is with probability tracing.sampleRate (the SDK's
// sampler then samples every root: ParentBased(AlwaysSample)). Then the
// Trace is nil and ctx, with the caller's trace context and baggage
// extracted, is the context to start the EntryPoint span in.
//
// Otherwise begin returns the request's Trace without touching the SDK: no
// span, no context, no attribute; only the IDs the server's traceparent
// and the access log carry: the caller's trace ID (its traceparent's flags
// 00) or a new one, and a new span ID. That is all W3C Trace Context asks
// of a participant that records nothing (https://www.w3.org/TR/trace-context/
// §3.5: a new parent-id, tracestate and baggage passed on as they came).
func (t *Tracing) begin(r *http.Request) (context.Context, *Trace) {
	parent, ok := parseTraceparent(r.Header["Traceparent"])
	if ok && parent.flags&flagSampled == 0 {
		return nil, &Trace{t: t, traceID: parent.traceID, spanID: newSpanID(), flags: parent.flags & flagRandom, continued: true}
	}
	if ok || t.sampleRoot() {
		ctx := r.Context()
		if ok || len(r.Header["Baggage"]) > 0 {
			ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		return ctx, nil
	}
	return nil, &Trace{t: t, traceID: newTraceID(), spanID: newSpanID()}
}

// traceparent flags (W3C Trace Context Level 2 §3.2.2.5): sampled, and
// random (the trace ID's right part is random).
const (
	flagSampled = 0x01
	flagRandom  = 0x02
)

// parentContext is a caller's traceparent, parsed.
type parentContext struct {
	traceID trace.TraceID
	spanID  trace.SpanID
	flags   byte // sampled and random only
}

// parseTraceparent parses the first traceparent field value as the
// OpenTelemetry propagator does (https://www.w3.org/TR/trace-context/
// #traceparent-header): version-traceid-parentid-flags in lowercase hex,
// version ff invalid, version 00 exactly 55 characters with flags ≤ 03,
// a later version possibly followed by "-" and more; trace and parent IDs
// not all zero. ok is false for anything else (a new trace begins).
func parseTraceparent(values []string) (p parentContext, ok bool) {
	if len(values) == 0 {
		return p, false
	}
	h := values[0]
	if len(h) < 55 || h[2] != '-' || h[35] != '-' || h[52] != '-' {
		return p, false
	}
	var ver, flags [1]byte
	if !unhex(ver[:], h[0:2]) || ver[0] == 0xff ||
		!unhex(p.traceID[:], h[3:35]) || !unhex(p.spanID[:], h[36:52]) || !unhex(flags[:], h[53:55]) {
		return p, false
	}
	if ver[0] == 0 && (len(h) != 55 || flags[0] > 3) {
		return p, false
	}
	if len(h) > 55 && h[55] != '-' {
		return p, false
	}
	p.flags = flags[0] & (flagSampled | flagRandom)
	return p, p.traceID.IsValid() && p.spanID.IsValid()
}

// unhex decodes lowercase hex src into dst (len(src) == 2*len(dst)); upper
// case is not allowed in traceparent.
func unhex(dst []byte, src string) bool {
	for i := range dst {
		hi, lo := hexVal(src[2*i]), hexVal(src[2*i+1])
		if hi > 0xf || lo > 0xf {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func hexVal(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return 0xff
}

// traceparent is the W3C traceparent header of a span not sampled
// (https://www.w3.org/TR/trace-context/#traceparent-header): version 00,
// trace ID, parent ID, flags (the sampled bit clear).
func traceparent(tid trace.TraceID, sid trace.SpanID, flags byte) string {
	return traceparentFlags(tid, sid, flags&^flagSampled)
}

// traceparentFlags is the traceparent header of version 00 with flags.
func traceparentFlags(tid trace.TraceID, sid trace.SpanID, flags byte) string {
	var b [55]byte
	copy(b[:], "00-")
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	const digits = "0123456789abcdef"
	b[52], b[53], b[54] = '-', digits[flags>>4], digits[flags&0xf]
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
