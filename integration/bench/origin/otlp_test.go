package main

import (
	"fmt"
	"math/rand/v2"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	resourcev1 "go.opentelemetry.io/proto/otlp/resource/v1"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestCountSpansMatchesDecoding: the wire walk counts what decoding the
// message counts, for requests of random shape (resources and scopes with
// attributes, schema URLs and spans with events and links, which carry
// their own nested fields numbered 1 and 2), and rejects truncated ones.
func TestCountSpansMatchesDecoding(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	attr := func(k string) []*commonv1.KeyValue {
		return []*commonv1.KeyValue{{Key: k, Value: &commonv1.AnyValue{Value: &commonv1.AnyValue_StringValue{StringValue: "v"}}}}
	}
	for i := range 200 {
		req := &collectortrace.ExportTraceServiceRequest{}
		want := 0
		for r := range rnd.IntN(4) {
			rs := &tracev1.ResourceSpans{Resource: &resourcev1.Resource{Attributes: attr(fmt.Sprint("r", r))}, SchemaUrl: "s"}
			for s := range rnd.IntN(4) {
				ss := &tracev1.ScopeSpans{Scope: &commonv1.InstrumentationScope{Name: fmt.Sprint("scope", s), Version: "1"}}
				for range rnd.IntN(6) {
					ss.Spans = append(ss.Spans, &tracev1.Span{
						TraceId: make([]byte, 16), SpanId: make([]byte, 8), Name: "GET",
						Attributes: attr("http.method"),
						Events:     []*tracev1.Span_Event{{Name: "e", Attributes: attr("a")}},
						Links:      []*tracev1.Span_Link{{TraceId: make([]byte, 16), SpanId: make([]byte, 8)}},
					})
					want++
				}
				rs.ScopeSpans = append(rs.ScopeSpans, ss)
			}
			req.ResourceSpans = append(req.ResourceSpans, rs)
		}
		b, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := countSpans(b)
		if err != nil || got != want {
			t.Fatalf("request %d: countSpans = %d, %v; decoding counts %d", i, got, err, want)
		}
		if len(b) > 1 {
			if _, err := countSpans(b[:len(b)-1]); err == nil {
				t.Fatalf("request %d: a truncated request was accepted", i)
			}
		}
	}
}
