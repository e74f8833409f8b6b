package observe

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Trace is the spans of one request; End finishes them.
//
// The spans are Gantry's own (span): each one's attributes are appended to
// its slice while it is open and handed to the exporter when it ends.
//
// A request that is not sampled (begin) makes no span: entry is nil, and
// the Trace holds only the IDs its server's traceparent and the access log
// carry.
type Trace struct {
	t             *Tracing
	entry, router *span
	client        *span // the attempt in progress; nil between attempts
	// rawQuery and safeQuery are the request's query and its redaction,
	// computed once for the EntryPoint span and reused by each attempt.
	rawQuery, safeQuery string

	// Not sampled: traceID is the caller's trace (continued) or a new one,
	// spanID the EntryPoint span's that is not recorded, flags the
	// traceparent flags sent on (the caller's random bit; never sampled).
	traceID   trace.TraceID
	spanID    trace.SpanID
	flags     byte
	continued bool // the caller's trace: its tracestate goes on
	// tp is the value of the traceparent header sent, in the Trace so that
	// setting it allocates no slice. Not sampled: made by the first
	// attempt; sampled: set by each attempt (inject).
	tp [1]string
}

// Start begins the spans of r, routed by router (rule, to service) on
// entryPoint: EntryPoint (server) ← Router. It returns r as it came (the
// spans' context stays in the Trace: nothing downstream reads it from the
// request); each try on a server then adds a ReverseProxy (client) span
// (Attempt). Requests to Gantry's own services are not traced unless
// tracing.addInternals (Traefik's default); Start then returns r and nil.
func (t *Tracing) Start(r *http.Request, entryPoint, router, rule, service string) (*http.Request, *Trace) {
	if !t.addInternals && (strings.HasSuffix(service, "@internal") || strings.HasSuffix(router, "@internal")) {
		return r, nil
	}
	parent, tr := t.begin(r)
	if tr != nil {
		return r, tr // not sampled
	}
	start := time.Now()
	tr = &Trace{t: t}
	tr.entry = t.startSpan(SpanEntryPoint, trace.SpanKindServer, parent, start)
	t.serverAttributes(tr, tr.entry, r, entryPoint)
	tr.router = t.startSpan(SpanRouter, trace.SpanKindInternal, tr.entry.sc, start)
	tr.router.addString("traefik.service.name", service)
	tr.router.addString("traefik.router.name", router)
	tr.router.addString(semconv.HTTPRouteKey, rule)
	return r, tr
}

// StartUnrouted begins the EntryPoint span of a request no router matched
// on entryPoint (Traefik traces every request at the entrypoint, before
// routing): End finishes it with the status answered (404, or the
// entrypoint's notFound page).
func (t *Tracing) StartUnrouted(r *http.Request, entryPoint string) *Trace {
	parent, tr := t.begin(r)
	if tr != nil {
		return tr
	}
	tr = &Trace{t: t}
	tr.entry = t.startSpan(SpanEntryPoint, trace.SpanKindServer, parent, time.Now())
	t.serverAttributes(tr, tr.entry, r, entryPoint)
	return tr
}

// Attempt begins the ReverseProxy (client) span of one try of r on the
// server upstream (a URL), a child of the Router span, and sets r's
// traceparent (and tracestate) to it, so the server continues the trace
// from this attempt; baggage goes on as it came. A retry makes a new span:
// each try is one, as each of Traefik's round trips is. AttemptDone ends
// it.
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
	if tr.router == nil { // an unrouted request's trace: no attempt
		return
	}
	if tr.client != nil {
		tr.client.finish(time.Time{})
	}
	s := tr.t.startSpan(SpanReverseProxy, trace.SpanKindClient, tr.router.sc, tr.now())
	tr.t.clientAttributes(tr, s, r, upstream)
	inject(s.sc, r.Header, &tr.tp)
	tr.client = s
}

// AttemptDone ends the attempt's span: status is the server's answer, or
// what its failure maps to (502, 504; 0: none), err the failure (nil when
// the exchange completed), h the response headers (captured ones become
// attributes).
func (tr *Trace) AttemptDone(status int, h http.Header, err error) {
	if tr == nil || tr.client == nil {
		return
	}
	s := tr.client
	code, desc := statusAttrs(s, status, trace.SpanKindClient, h, tr.t.respHeaders)
	if err != nil {
		code, desc = codes.Error, err.Error()
	}
	s.setStatus(code, desc)
	tr.client = nil
	s.finish(time.Time{})
}

// now is the time on the clock of the EntryPoint span (not nil): its
// start plus the monotonic time since, as a span's end is (finish). One
// clock read instead of time.Now's two (wall and monotonic).
func (tr *Trace) now() time.Time {
	return tr.entry.start.Add(time.Since(tr.entry.start))
}

// inject sets h's traceparent to sc (version 00, its sampled and random
// flags) and its tracestate to sc's, when it has one, as the
// OpenTelemetry TraceContext propagator does; baggage, the caller's, goes
// on as it came. The keys are the canonical ones: nothing is looked up.
// The traceparent value is tp, overwritten.
func inject(sc trace.SpanContext, h http.Header, tp *[1]string) {
	if !sc.IsValid() {
		return
	}
	if ts := sc.TraceState(); ts.Len() > 0 {
		h["Tracestate"] = []string{ts.String()}
	}
	tp[0] = traceparentFlags(sc.TraceID(), sc.SpanID(), byte(sc.TraceFlags())&(flagSampled|flagRandom))
	h["Traceparent"] = tp[:]
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
	end := tr.now()
	entry := tr.entry
	ev.TraceID, ev.SpanID = entry.sc.TraceID(), entry.sc.SpanID()
	if tr.client != nil { // an attempt aborted by a panic
		tr.client.finish(end)
		tr.client = nil
	}
	if tr.router != nil {
		tr.router.finish(end)
		tr.router = nil
	}
	code, desc := statusAttrs(entry, ev.Status, trace.SpanKindServer, ev.ResponseHeader, tr.t.respHeaders)
	entry.setStatus(code, desc)
	tr.entry = nil
	entry.finish(end)
}

// begin decides whether r is sampled. A request continuing a caller's
// sampled trace (a valid traceparent with the sampled flag) is; one
// starting a trace is with probability tracing.sampleRate. Then the Trace
// is nil and parent is the caller's span context (remote, with its
// tracestate, as the OpenTelemetry propagator extracts it) or, for a new
// trace, invalid.
//
// Otherwise begin returns the request's Trace and records nothing: no
// span, no attribute; only the IDs the server's traceparent and the access
// log carry: the caller's trace ID (its traceparent's flags 00) or a new
// one, and a new span ID. That is all W3C Trace Context asks of a
// participant that records nothing (https://www.w3.org/TR/trace-context/
// §3.5: a new parent-id, tracestate and baggage passed on as they came).
func (t *Tracing) begin(r *http.Request) (trace.SpanContext, *Trace) {
	p, ok := parseTraceparent(r.Header["Traceparent"])
	if ok && p.flags&flagSampled == 0 {
		return trace.SpanContext{}, &Trace{t: t, traceID: p.traceID, spanID: newSpanID(), flags: p.flags & flagRandom, continued: true}
	}
	if ok {
		scc := trace.SpanContextConfig{TraceID: p.traceID, SpanID: p.spanID, TraceFlags: trace.TraceFlags(p.flags), Remote: true}
		if ts := r.Header["Tracestate"]; len(ts) > 0 { // the first field, as the propagator reads it
			if state, err := trace.ParseTraceState(ts[0]); err == nil {
				scc.TraceState = state
			}
		}
		return trace.NewSpanContext(scc), nil
	}
	if t.sampleRoot() {
		return trace.SpanContext{}, nil
	}
	return trace.SpanContext{}, &Trace{t: t, traceID: newTraceID(), spanID: newSpanID()}
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
