package observe

import (
	"math"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the OTLP messages Gantry encodes
// (opentelemetry-proto: collector/trace/v1/trace_service.proto,
// trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto).
const (
	fExportResourceSpans protowire.Number = 1 // ExportTraceServiceRequest.resource_spans

	fResourceSpansResource   protowire.Number = 1
	fResourceSpansScopeSpans protowire.Number = 2
	fResourceSpansSchemaURL  protowire.Number = 3
	fResourceAttributes      protowire.Number = 1

	fScopeSpansScope     protowire.Number = 1
	fScopeSpansSpans     protowire.Number = 2
	fScopeSpansSchemaURL protowire.Number = 3
	fScopeName           protowire.Number = 1
	fScopeVersion        protowire.Number = 2
	fScopeAttributes     protowire.Number = 3

	fSpanTraceID           protowire.Number = 1
	fSpanSpanID            protowire.Number = 2
	fSpanTraceState        protowire.Number = 3
	fSpanParentSpanID      protowire.Number = 4
	fSpanName              protowire.Number = 5
	fSpanKind              protowire.Number = 6
	fSpanStart             protowire.Number = 7
	fSpanEnd               protowire.Number = 8
	fSpanAttributes        protowire.Number = 9
	fSpanDroppedAttributes protowire.Number = 10
	fSpanEvents            protowire.Number = 11
	fSpanDroppedEvents     protowire.Number = 12
	fSpanLinks             protowire.Number = 13
	fSpanDroppedLinks      protowire.Number = 14
	fSpanStatus            protowire.Number = 15
	fSpanFlags             protowire.Number = 16

	fEventTime              protowire.Number = 1
	fEventName              protowire.Number = 2
	fEventAttributes        protowire.Number = 3
	fEventDroppedAttributes protowire.Number = 4

	fLinkTraceID           protowire.Number = 1
	fLinkSpanID            protowire.Number = 2
	fLinkAttributes        protowire.Number = 4
	fLinkDroppedAttributes protowire.Number = 5
	fLinkFlags             protowire.Number = 6

	fStatusMessage protowire.Number = 2
	fStatusCode    protowire.Number = 3

	fKeyValueKey   protowire.Number = 1
	fKeyValueValue protowire.Number = 2
	fAnyString     protowire.Number = 1
	fAnyBool       protowire.Number = 2
	fAnyInt        protowire.Number = 3
	fAnyDouble     protowire.Number = 4
	fAnyArray      protowire.Number = 5
	fAnyKvlist     protowire.Number = 6
	fAnyBytes      protowire.Number = 7
	fListValues    protowire.Number = 1 // ArrayValue.values, KeyValueList.values
)

// Span flags (trace.proto SpanFlags): the parent-is-remote bit is known,
// and its value.
const (
	spanFlagsHasIsRemote = 0x100
	spanFlagsIsRemote    = 0x200
)

// lenPrefix is the room left for a nested message's length before its
// body is written: 3 bytes hold lengths below 2 MiB; a shorter or longer
// varint moves the body (endMessage).
const lenPrefix = 3

// beginMessage appends the tag of the length-delimited field num and room
// for its length; endMessage, given the offset returned, writes the length.
func beginMessage(b []byte, num protowire.Number) ([]byte, int) {
	b = appendTag(b, num, protowire.BytesType)
	return append(b, 0, 0, 0), len(b)
}

// endMessage writes the length of the message whose body starts lenPrefix
// bytes after at, moving the body when its length's varint is not
// lenPrefix bytes long.
func endMessage(b []byte, at int) []byte {
	n := len(b) - at - lenPrefix
	size := protowire.SizeVarint(uint64(n))
	switch {
	case size < lenPrefix:
		copy(b[at+size:], b[at+lenPrefix:])
		b = b[:at+size+n]
	case size > lenPrefix:
		b = append(b, make([]byte, size-lenPrefix)...)
		copy(b[at+size:], b[at+lenPrefix:at+lenPrefix+n])
	}
	protowire.AppendVarint(b[:at], uint64(n))
	return b
}

// appendVarint is protowire.AppendVarint with the one-byte case (nearly
// every tag and length written here) inlined; appendTag the same for a
// tag.
func appendVarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return protowire.AppendVarint(b, v)
}

func appendTag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	if num < 16 {
		return append(b, byte(num)<<3|byte(typ))
	}
	return protowire.AppendTag(b, num, typ)
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, num, protowire.BytesType)
	b = appendVarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = appendTag(b, num, protowire.BytesType)
	b = appendVarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendUvarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = appendTag(b, num, protowire.VarintType)
	return appendVarint(b, v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = appendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = appendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

// clampCount is a dropped-items count as the uint32 OTLP carries (clamped).
func clampCount(n int) uint64 { return uint64(min(max(n, 0), math.MaxUint32)) }

// unixNano is an OTLP timestamp: ns nanoseconds since the epoch, 0 before it.
func unixNano(ns int64) uint64 { return uint64(max(ns, 0)) }

// appendKeyValues appends each of attrs as a KeyValue in field num
// (appendKeyValue).
func appendKeyValues(b []byte, num protowire.Number, attrs []attribute.KeyValue) []byte {
	for i := range attrs {
		b = appendKeyValue(b, num, &attrs[i])
	}
	return b
}

// appendKeyValue appends kv as a KeyValue in field num. A string, integer
// or boolean attribute (nearly all of Gantry's) is written at once, its
// lengths computed first; other values are written first and their
// lengths put in front after (endMessage).
func appendKeyValue(b []byte, num protowire.Number, kv *attribute.KeyValue) []byte {
	switch kv.Value.Type() {
	case attribute.STRING:
		return appendStringKeyValue(b, num, string(kv.Key), kv.Value.AsString())
	case attribute.INT64:
		return appendIntKeyValue(b, num, string(kv.Key), kv.Value.AsInt64())
	case attribute.BOOL:
		b = appendKeyValueHead(b, num, string(kv.Key), 2)
		b = appendTag(b, fAnyBool, protowire.VarintType)
		return appendVarint(b, protowire.EncodeBool(kv.Value.AsBool()))
	}
	b, at := beginMessage(b, num)
	b = appendString(b, fKeyValueKey, string(kv.Key))
	var vat int
	b, vat = beginMessage(b, fKeyValueValue)
	b = appendAnyValue(b, kv.Value)
	b = endMessage(b, vat)
	return endMessage(b, at)
}

// appendStringKeyValue appends the KeyValue key = string s in field num.
func appendStringKeyValue(b []byte, num protowire.Number, key, s string) []byte {
	b = appendKeyValueHead(b, num, key, 1+protowire.SizeBytes(len(s)))
	b = appendTag(b, fAnyString, protowire.BytesType)
	b = appendVarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendIntKeyValue appends the KeyValue key = integer v in field num.
func appendIntKeyValue(b []byte, num protowire.Number, key string, v int64) []byte {
	b = appendKeyValueHead(b, num, key, 1+protowire.SizeVarint(uint64(v)))
	b = appendTag(b, fAnyInt, protowire.VarintType)
	return appendVarint(b, uint64(v))
}

// appendKeyValueHead appends a KeyValue's tag (field num) and length, its
// key, and its value's tag and length (anyLen: the AnyValue's body).
func appendKeyValueHead(b []byte, num protowire.Number, key string, anyLen int) []byte {
	body := 1 + protowire.SizeBytes(anyLen)
	if key != "" {
		body += 1 + protowire.SizeBytes(len(key))
	}
	b = appendTag(b, num, protowire.BytesType)
	b = appendVarint(b, uint64(body))
	b = appendString(b, fKeyValueKey, key)
	b = appendTag(b, fKeyValueValue, protowire.BytesType)
	return appendVarint(b, uint64(anyLen))
}

// appendAnyValue appends the body of an AnyValue holding v, as the
// OpenTelemetry exporters convert attribute values (an EMPTY value is an
// AnyValue with no value set, an unknown type the string "INVALID").
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		b = appendTag(b, fAnyBool, protowire.VarintType)
		return appendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = appendTag(b, fAnyInt, protowire.VarintType)
		return appendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = appendTag(b, fAnyDouble, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = appendTag(b, fAnyString, protowire.BytesType)
		return protowire.AppendString(b, v.AsString())
	case attribute.BYTESLICE:
		b = appendTag(b, fAnyBytes, protowire.BytesType)
		return protowire.AppendBytes(b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		return appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return appendArray(b, v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		b, at := beginMessage(b, fAnyKvlist)
		b = appendKeyValues(b, fListValues, v.AsMap())
		return endMessage(b, at)
	case attribute.EMPTY:
		return b
	}
	b = appendTag(b, fAnyString, protowire.BytesType)
	return protowire.AppendString(b, "INVALID")
}

// appendArray appends an AnyValue's array_value holding vals, each
// converted to an attribute value by conv.
func appendArray[T any](b []byte, vals []T, conv func(T) attribute.Value) []byte {
	b, at := beginMessage(b, fAnyArray)
	for _, v := range vals {
		var vat int
		b, vat = beginMessage(b, fListValues)
		b = appendAnyValue(b, conv(v))
		b = endMessage(b, vat)
	}
	return endMessage(b, at)
}

// spanGroup is the spans of one resource and instrumentation scope: one
// ScopeSpans of one ResourceSpans.
type spanGroup struct {
	res   *resource.Resource
	key   attribute.Distinct // res.Equivalent()
	scope instrumentation.Scope
	spans []sdktrace.ReadOnlySpan
}

// appendExportRequest appends the OTLP ExportTraceServiceRequest of spans
// to b, grouped by resource, then by instrumentation scope, in the order
// each first appears. groups is scratch space, returned for reuse.
func appendExportRequest(b []byte, spans []sdktrace.ReadOnlySpan, groups []spanGroup) ([]byte, []spanGroup) {
	groups = groups[:0]
	for _, s := range spans {
		if s == nil {
			continue
		}
		res, scope := s.Resource(), s.InstrumentationScope()
		key := res.Equivalent()
		i := 0
		for i < len(groups) && (groups[i].key != key || groups[i].scope != scope) {
			i++
		}
		if i == len(groups) {
			var kept []sdktrace.ReadOnlySpan // the slice a group here had last time
			if i < cap(groups) {
				kept = groups[:i+1][i].spans[:0]
			}
			groups = append(groups, spanGroup{res: res, key: key, scope: scope, spans: kept})
		}
		groups[i].spans = append(groups[i].spans, s)
	}
	for i := range groups {
		if slices.ContainsFunc(groups[:i], func(g spanGroup) bool { return g.key == groups[i].key }) {
			continue // its ScopeSpans went into the ResourceSpans of an earlier group
		}
		var at int
		b, at = beginMessage(b, fExportResourceSpans)
		if res := groups[i].res; res != nil {
			var rat int
			b, rat = beginMessage(b, fResourceSpansResource)
			b = appendKeyValues(b, fResourceAttributes, res.Attributes())
			b = endMessage(b, rat)
		}
		for j := i; j < len(groups); j++ {
			if groups[j].key == groups[i].key {
				b = appendScopeSpans(b, &groups[j])
			}
		}
		if res := groups[i].res; res != nil {
			b = appendString(b, fResourceSpansSchemaURL, res.SchemaURL())
		}
		b = endMessage(b, at)
	}
	for i := range groups {
		clear(groups[i].spans)
		groups[i].res = nil
	}
	return b, groups
}

// appendScopeSpans appends g as a ScopeSpans.
func appendScopeSpans(b []byte, g *spanGroup) []byte {
	b, at := beginMessage(b, fResourceSpansScopeSpans)
	if g.scope != (instrumentation.Scope{}) {
		var sat int
		b, sat = beginMessage(b, fScopeSpansScope)
		b = appendString(b, fScopeName, g.scope.Name)
		b = appendString(b, fScopeVersion, g.scope.Version)
		b = appendKeyValues(b, fScopeAttributes, g.scope.Attributes.ToSlice())
		b = endMessage(b, sat)
	}
	for _, s := range g.spans {
		if own, ok := s.(*span); ok && len(own.enc) > 0 {
			b = append(b, own.enc...) // encoded when it ended
			continue
		}
		b = appendSpan(b, s)
	}
	b = appendString(b, fScopeSpansSchemaURL, g.scope.SchemaURL)
	return endMessage(b, at)
}

// appendSpan appends s as a Span, field for field as the OpenTelemetry
// exporters convert it (go.opentelemetry.io/otel/exporters/otlp/otlptrace
// internal/tracetransform): the status is always present, the flags carry
// the W3C trace flags and whether the parent is remote, a link carries no
// trace state (Gantry makes no link).
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	b, at := beginMessage(b, fScopeSpansSpans)
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, fSpanTraceID, tid[:])
	b = appendBytes(b, fSpanSpanID, sid[:])
	b = appendString(b, fSpanTraceState, sc.TraceState().String())
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, fSpanParentSpanID, psid[:])
	}
	b = appendString(b, fSpanName, s.Name())
	b = appendUvarint(b, fSpanKind, uint64(spanKind(s.SpanKind())))
	b = appendFixed64(b, fSpanStart, unixNano(s.StartTime().UnixNano()))
	b = appendFixed64(b, fSpanEnd, unixNano(s.EndTime().UnixNano()))
	if own, ok := s.(*span); ok && own.direct {
		b = append(b, own.kv...) // encoded as they were set
	} else {
		b = appendKeyValues(b, fSpanAttributes, s.Attributes())
	}
	b = appendUvarint(b, fSpanDroppedAttributes, clampCount(s.DroppedAttributes()))
	for _, e := range s.Events() {
		var eat int
		b, eat = beginMessage(b, fSpanEvents)
		b = appendFixed64(b, fEventTime, unixNano(e.Time.UnixNano()))
		b = appendString(b, fEventName, e.Name)
		b = appendKeyValues(b, fEventAttributes, e.Attributes)
		b = appendUvarint(b, fEventDroppedAttributes, clampCount(e.DroppedAttributeCount))
		b = endMessage(b, eat)
	}
	b = appendUvarint(b, fSpanDroppedEvents, clampCount(s.DroppedEvents()))
	for _, l := range s.Links() {
		var lat int
		b, lat = beginMessage(b, fSpanLinks)
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b = appendBytes(b, fLinkTraceID, ltid[:])
		b = appendBytes(b, fLinkSpanID, lsid[:])
		b = appendKeyValues(b, fLinkAttributes, l.Attributes)
		b = appendUvarint(b, fLinkDroppedAttributes, clampCount(l.DroppedAttributeCount))
		b = appendFixed32(b, fLinkFlags, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		b = endMessage(b, lat)
	}
	b = appendUvarint(b, fSpanDroppedLinks, clampCount(s.DroppedLinks()))
	st := s.Status()
	var stat int
	b, stat = beginMessage(b, fSpanStatus)
	b = appendString(b, fStatusMessage, st.Description)
	b = appendUvarint(b, fStatusCode, uint64(statusCode(st.Code)))
	b = endMessage(b, stat)
	b = appendFixed32(b, fSpanFlags, spanFlags(sc.TraceFlags(), parent))
	return endMessage(b, at)
}

// spanFlags are OTLP's span flags: the W3C trace flags, and whether the
// parent is remote (always known here).
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | spanFlagsHasIsRemote
	if parent.IsRemote() {
		f |= spanFlagsIsRemote
	}
	return f
}

// spanKind is OTLP's Span.SpanKind of k (UNSPECIFIED 0, INTERNAL 1,
// SERVER 2, CLIENT 3, PRODUCER 4, CONSUMER 5).
func spanKind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindInternal:
		return 1
	case trace.SpanKindServer:
		return 2
	case trace.SpanKindClient:
		return 3
	case trace.SpanKindProducer:
		return 4
	case trace.SpanKindConsumer:
		return 5
	}
	return 0
}

// statusCode is OTLP's Status.StatusCode of c (UNSET 0, OK 1, ERROR 2).
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}
