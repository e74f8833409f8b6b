package observe

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// span is one of Gantry's request spans (EntryPoint, Router,
// ReverseProxy), recorded without the OpenTelemetry SDK's span: its
// attributes are appended to one slice (each span's keys are distinct
// unless tracing.globalAttributes or the captured headers may repeat one:
// Tracing.mayRepeat), and spans are recycled through the batcher's free
// list (spanFree) once exported by Gantry's own exporter, which keeps
// nothing.
//
// A span is a sdktrace.ReadOnlySpan once ended (the embedded interface is
// nil: it only carries the interface's unexported method; every method is
// defined here), so any sdktrace.SpanExporter exports it.
type span struct {
	sdktrace.ReadOnlySpan

	t          *Tracing
	name       string
	kind       trace.SpanKind
	sc, parent trace.SpanContext
	start, end time.Time
	attrs      []attribute.KeyValue
	dropped    int // attributes dropped by the limits (spanLimits)
	// direct: the attributes are encoded as they are set (kv, nkv of
	// them: Span.attributes fields, the limits applied at once), not kept
	// in attrs. For Gantry's own exporter when no key can repeat
	// (Tracing.direct): building and copying attribute.KeyValue values and
	// walking them again to encode them cost more than the encoding.
	direct bool
	kv     []byte
	nkv    int
	status sdktrace.Status
	// enc is the span's OTLP encoding (appendSpan), made when it ends on
	// the request's goroutine while its attributes are in that core's
	// cache, for Gantry's own exporter only (spanBatcher.free set); empty
	// otherwise. The exporter copies it instead of encoding the span.
	enc []byte
}

// maxPooledAttrs bounds the attribute slice of a span kept for reuse (many
// captured headers grow it); maxPooledEnc its encoding's buffer (bytes).
const (
	maxPooledAttrs = 256
	maxPooledEnc   = 16 << 10
)

func newSpan() *span { return &span{attrs: make([]attribute.KeyValue, 0, 32)} }

// spanFree keeps the spans of exported batches for the next requests: the
// batcher puts a whole batch back under one lock (put) and a request takes
// one span at a time (get), which clears it. A sync.Pool did this before,
// but its per-P caches made every span cross cores twice through them
// (put on the exporter's P, stolen by a request's P): about 2 µs of CPU a
// request in BenchmarkObservedRequest. At most max spans are kept (a
// queue and a batch: all that can be in flight); the rest are left to the
// garbage collector.
type spanFree struct {
	mu    sync.Mutex
	spans []*span
	max   int
}

// get is a cleared span: a kept one, else a new one.
func (f *spanFree) get() *span {
	f.mu.Lock()
	n := len(f.spans)
	if n == 0 {
		f.mu.Unlock()
		return newSpan()
	}
	s := f.spans[n-1]
	f.spans[n-1] = nil
	f.spans = f.spans[:n-1]
	f.mu.Unlock()
	attrs := s.attrs // past len(attrs) all zero (limitAttrs)
	if cap(attrs) > maxPooledAttrs {
		attrs = make([]attribute.KeyValue, 0, 32)
	}
	clear(attrs)
	enc, kv := s.enc, s.kv
	if cap(enc) > maxPooledEnc {
		enc = nil
	}
	if cap(kv) > maxPooledEnc {
		kv = nil
	}
	*s = span{attrs: attrs[:0], enc: enc[:0], kv: kv[:0]}
	return s
}

// keep keeps s, not queued and not referenced any more, for reuse (up to
// f.max).
func (f *spanFree) keep(s *span) {
	f.mu.Lock()
	if len(f.spans) < f.max {
		f.spans = append(f.spans, s)
	}
	f.mu.Unlock()
}

// put keeps the spans of batch (all *span, exported and not referenced
// any more) for reuse, up to f.max.
func (f *spanFree) put(batch []sdktrace.ReadOnlySpan) {
	f.mu.Lock()
	for _, s := range batch[:min(len(batch), f.max-len(f.spans))] {
		f.spans = append(f.spans, s.(*span))
	}
	f.mu.Unlock()
}

// startSpan begins a span of trace t named name, a child of parent (the
// caller's remote span context, or an invalid one: a new trace), at
// start. As the SDK with ParentBased(AlwaysSample) does, the trace ID is
// the parent's (else new), the span ID new, the flags the parent's with
// the sampled bit set, and the trace state the parent's.
func (t *Tracing) startSpan(name string, kind trace.SpanKind, parent trace.SpanContext, start time.Time) *span {
	tid := parent.TraceID()
	if !tid.IsValid() {
		tid = newTraceID()
	}
	s := t.batch.newSpan()
	s.t, s.name, s.kind, s.parent, s.start = t, name, kind, parent, start
	s.direct = t.direct
	s.sc = trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    tid,
		SpanID:     newSpanID(),
		TraceFlags: parent.TraceFlags() | trace.FlagsSampled,
		TraceState: parent.TraceState(),
	})
	return s
}

// setStatus sets the span status as the SDK's SetStatus does: a
// description only with Error, and never a lower code over a higher one.
func (s *span) setStatus(code codes.Code, desc string) {
	if code == codes.Unset || s.status.Code > code {
		return
	}
	if code != codes.Error {
		desc = ""
	}
	s.status = sdktrace.Status{Code: code, Description: desc}
}

// finish ends s at end (zero: its start plus the monotonic time since)
// and queues it for export; s is not the caller's any more.
func (s *span) finish(end time.Time) {
	if end.IsZero() {
		end = s.start.Add(time.Since(s.start))
	}
	s.end = end
	s.t.limitAttrs(s)
	s.t.batch.enqueue(s)
}

// The sdktrace.ReadOnlySpan methods of an ended span.

func (s *span) Name() string                                { return s.name }
func (s *span) SpanContext() trace.SpanContext              { return s.sc }
func (s *span) Parent() trace.SpanContext                   { return s.parent }
func (s *span) SpanKind() trace.SpanKind                    { return s.kind }
func (s *span) StartTime() time.Time                        { return s.start }
func (s *span) EndTime() time.Time                          { return s.end }
func (s *span) Links() []sdktrace.Link                      { return nil }
func (s *span) Events() []sdktrace.Event                    { return nil }
func (s *span) Status() sdktrace.Status                     { return s.status }
func (s *span) Resource() *resource.Resource                { return s.t.res }
func (s *span) DroppedAttributes() int                      { return s.dropped }
func (s *span) DroppedLinks() int                           { return 0 }
func (s *span) DroppedEvents() int                          { return 0 }
func (s *span) ChildSpanCount() int                         { return 0 }
func (s *span) InstrumentationScope() instrumentation.Scope { return s.t.scope }

// Attributes are the span's attributes; a direct span's are decoded from
// their encoding (for an exporter other than Gantry's, which reads kv).
func (s *span) Attributes() []attribute.KeyValue {
	if s.direct {
		return decodeKeyValues(s.kv)
	}
	return s.attrs
}

// InstrumentationLibrary is the deprecated name of InstrumentationScope.
func (s *span) InstrumentationLibrary() instrumentation.Library { //nolint:staticcheck // part of sdktrace.ReadOnlySpan
	return s.t.scope
}

// spanLimits are the SDK's span attribute limits, from the same variables:
// count (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT, else OTEL_ATTRIBUTE_COUNT_LIMIT;
// default 128, negative: none) and value length in characters of a string
// (OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT, else
// OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT; default none). A value that is not an
// integer is ignored (the default applies), as in the SDK.
type spanLimits struct{ count, length int }

func spanLimitsFromEnv() spanLimits {
	return spanLimits{
		count:  envInt(128, "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "OTEL_ATTRIBUTE_COUNT_LIMIT"),
		length: envInt(-1, "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT"),
	}
}

// envInt is the integer value of the first of keys that is set, else def.
func envInt(def int, keys ...string) int {
	for _, k := range keys {
		if v := os.Getenv(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return def
			}
			return n
		}
	}
	return def
}

// limitAttrs applies the SDK's attribute rules to s's attributes, set at
// once: one with an empty key is dropped; a repeated key keeps its first
// place and its last value (only looked for when t.mayRepeat); keys past
// the count limit are dropped (counted); strings are cut to the length
// limit.
func (t *Tracing) limitAttrs(s *span) {
	if s.direct {
		return // applied as each was set (span.admit)
	}
	attrs := s.attrs
	invalid := func(a attribute.KeyValue) bool { return !a.Valid() }
	if t.mayRepeat || len(attrs) > t.limits.count && t.limits.count >= 0 || slices.ContainsFunc(attrs, invalid) {
		kept := attrs[:0]
	next:
		for _, a := range attrs {
			if !a.Valid() {
				s.dropped++
				continue
			}
			for i := range kept {
				if kept[i].Key == a.Key {
					kept[i] = a
					continue next
				}
			}
			if t.limits.count >= 0 && len(kept) >= t.limits.count {
				s.dropped++
				continue
			}
			kept = append(kept, a)
		}
		clear(attrs[len(kept):])
		attrs = kept
	}
	if t.limits.length >= 0 {
		for i, a := range attrs {
			attrs[i] = truncateAttr(t.limits.length, a)
		}
	}
	s.attrs = attrs
}

// truncateAttr cuts a string value (or each string of a slice) to limit
// characters, dropping invalid UTF-8 bytes of a string it cuts, as the
// SDK does.
func truncateAttr(limit int, a attribute.KeyValue) attribute.KeyValue {
	switch a.Value.Type() {
	case attribute.STRING:
		if s := a.Value.AsString(); len(s) > limit {
			a.Value = attribute.StringValue(truncateString(limit, s))
		}
	case attribute.STRINGSLICE:
		vals := a.Value.AsStringSlice()
		for i, v := range vals {
			vals[i] = truncateString(limit, v)
		}
		a.Value = attribute.StringSliceValue(vals)
	}
	return a
}

func truncateString(limit int, s string) string {
	if len(s) <= limit {
		return s
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	n := 0
	for i := range s {
		if n == limit {
			return s[:i]
		}
		n++
	}
	return s
}
