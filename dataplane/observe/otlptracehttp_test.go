package observe

import (
	"compress/gzip"
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
)

// collector is an OTLP/HTTP receiver that keeps each request body and
// answers each with the next of its statuses (200 when they run out).
type collector struct {
	mu       sync.Mutex
	bodies   [][]byte
	types    []string
	statuses []int
	answer   []byte // the 200 response's body (protobuf)
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = z
	}
	b, _ := io.ReadAll(body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies = append(c.bodies, b)
	c.types = append(c.types, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+r.Header.Get("X-Tenant"))
	if len(c.statuses) > 0 {
		code := c.statuses[0]
		c.statuses = c.statuses[1:]
		if code != http.StatusOK {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "try later", code)
			return
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(c.answer)
}

// testSpans are spans with every field the encoding carries: attributes of
// each type, events, links, a remote parent, trace state, dropped counts,
// each status; two resources, two scopes.
func testSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	ts, err := trace.ParseTraceState("vendor=x,other=y")
	if err != nil {
		t.Fatal(err)
	}
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sc := func(sid byte, remote bool) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{sid, 1}, TraceFlags: trace.FlagsSampled | 0x02, TraceState: ts, Remote: remote})
	}
	attrs := []attribute.KeyValue{
		attribute.String("s", "v"), attribute.String("empty", ""), attribute.Bool("b", true), attribute.Bool("f", false),
		attribute.Int64("i", -42), attribute.Int("zero", 0), attribute.Float64("d", 1.5),
		attribute.StringSlice("ss", []string{"a", "", "c"}), attribute.Int64Slice("is", []int64{1, -2}),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.Float64Slice("ds", []float64{0.25}),
		{Key: "nothing"}, attribute.String("long", strings.Repeat("x", 300)),
	}
	res1 := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.37.0", attribute.String("service.name", "gantry"), attribute.String("k", "v"))
	res2 := resource.NewSchemaless(attribute.String("service.name", "other"))
	scope := instrumentation.Scope{Name: "github.com/gantry-proxy/gantry"}
	scope2 := instrumentation.Scope{Name: "lib", Version: "1.2", SchemaURL: "https://x/s", Attributes: attribute.NewSet(attribute.Int("a", 1))}
	start := time.Unix(1700000000, 123456789)
	stubs := tracetest.SpanStubs{
		{Name: SpanEntryPoint, SpanContext: sc(1, false), Parent: sc(9, true), SpanKind: trace.SpanKindServer,
			StartTime: start, EndTime: start.Add(time.Millisecond), Attributes: attrs,
			Events: []sdktrace.Event{{Name: "ev", Time: start.Add(time.Microsecond), Attributes: attrs[:2], DroppedAttributeCount: 1}},
			Links:  []sdktrace.Link{{SpanContext: sc(7, true), Attributes: attrs[2:4], DroppedAttributeCount: 2}},
			Status: sdktrace.Status{Code: codes.Error, Description: "Invalid HTTP status code 999"}, DroppedAttributes: 3, DroppedEvents: 4, DroppedLinks: 5,
			Resource: res1, InstrumentationScope: scope},
		{Name: SpanRouter, SpanContext: sc(2, false), Parent: sc(1, false), SpanKind: trace.SpanKindInternal,
			StartTime: start, EndTime: start.Add(time.Millisecond), Status: sdktrace.Status{Code: codes.Ok}, Resource: res1, InstrumentationScope: scope},
		{Name: SpanReverseProxy, SpanContext: sc(3, false), Parent: sc(2, false), SpanKind: trace.SpanKindClient,
			StartTime: start, EndTime: start.Add(time.Millisecond), Resource: res2, InstrumentationScope: scope},
		{Name: "other", SpanContext: sc(4, false), SpanKind: trace.SpanKindProducer, StartTime: start, EndTime: start,
			Resource: res1, InstrumentationScope: scope2},
		{Name: "consumer", SpanContext: sc(5, false), SpanKind: trace.SpanKindConsumer, Resource: res1, InstrumentationScope: scope},
	}
	return stubs.Snapshots()
}

// decode parses an export request body.
func decode(t *testing.T, b []byte) *collectortrace.ExportTraceServiceRequest {
	t.Helper()
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		t.Fatalf("the body is not an ExportTraceServiceRequest: %v", err)
	}
	return &req
}

// TestSpanEncodingMatchesTheSDK: the same spans exported by Gantry's
// OTLP/HTTP exporter and by the OpenTelemetry SDK's decode (with the real
// OTLP proto types) to equal ExportTraceServiceRequests, resources in the
// same order; both are POSTed to the endpoint's path as protobuf with the
// configured headers.
func TestSpanEncodingMatchesTheSDK(t *testing.T) {
	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	ctx := context.Background()
	spans := testSpans(t)
	headers := map[string]string{"X-Tenant": "t1"}

	sdk, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"), otlptracehttp.WithHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	if err := sdk.ExportSpans(ctx, spans); err != nil {
		t.Fatal(err)
	}
	mine, err := newOTLPHTTPTraces(&static.OTLPHTTP{Endpoint: srv.URL + "/v1/traces", Headers: headers}, traceEnv{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second export reuses the buffers
		if err := mine.ExportSpans(ctx, spans); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.bodies) != 3 {
		t.Fatalf("%d requests, want 3", len(c.bodies))
	}
	want, got := decode(t, c.bodies[0]), decode(t, c.bodies[1])
	if len(want.ResourceSpans) != 2 || len(got.ResourceSpans) != 2 {
		t.Fatalf("resource spans: SDK %d, Gantry %d; want 2", len(want.ResourceSpans), len(got.ResourceSpans))
	}
	if string(want.ResourceSpans[0].Resource.Attributes[0].Value.GetStringValue()) != string(got.ResourceSpans[0].Resource.Attributes[0].Value.GetStringValue()) {
		want.ResourceSpans[0], want.ResourceSpans[1] = want.ResourceSpans[1], want.ResourceSpans[0] // the SDK's order is a map's
	}
	if !proto.Equal(want, got) {
		t.Errorf("Gantry's encoding differs from the SDK's:\nSDK:    %v\nGantry: %v", want, got)
	}
	if string(c.bodies[2]) != string(c.bodies[1]) {
		t.Error("a second export of the same spans is encoded differently")
	}
	for i, ty := range c.types {
		if ty != "POST /v1/traces application/x-protobuf t1" {
			t.Errorf("request %d: %q", i, ty)
		}
	}
}

// TestOTLPHTTPRetriesAndErrors: a 503 is retried and the spans then
// delivered; a 400 is an error naming the status, not retried; a partial
// success with rejected spans is an error; after Shutdown exports fail.
func TestOTLPHTTPRetriesAndErrors(t *testing.T) {
	c := &collector{statuses: []int{http.StatusServiceUnavailable, http.StatusOK, http.StatusBadRequest}}
	srv := httptest.NewServer(c)
	defer srv.Close()
	exp, err := newOTLPHTTPTraces(&static.OTLPHTTP{Endpoint: srv.URL}, traceEnv{})
	if err != nil {
		t.Fatal(err)
	}
	exp.post = (&otlpHTTPClient{client: srv.Client(), url: srv.URL + "/", backoff: time.Millisecond}).post
	ctx := context.Background()
	spans := testSpans(t)[:1]
	if err := exp.ExportSpans(ctx, spans); err != nil {
		t.Fatalf("after a 503: %v", err)
	}
	if len(c.bodies) != 2 || string(c.bodies[0]) != string(c.bodies[1]) {
		t.Fatalf("%d requests, want the same body twice", len(c.bodies))
	}
	if err := exp.ExportSpans(ctx, spans); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("after a 400: %v, want an error naming it", err)
	}
	if len(c.bodies) != 3 {
		t.Errorf("%d requests: a 400 was retried", len(c.bodies))
	}
	partial, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{
		PartialSuccess: &collectortrace.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "too old"}})
	c.answer = partial
	if err := exp.ExportSpans(ctx, spans); err == nil || !strings.Contains(err.Error(), "2 spans rejected: too old") {
		t.Errorf("partial success: %v", err)
	}
	c.answer, _ = proto.Marshal(&collectortrace.ExportTraceServiceResponse{PartialSuccess: &collectortrace.ExportTracePartialSuccess{}})
	if err := exp.ExportSpans(ctx, spans); err != nil {
		t.Errorf("an empty partial success: %v", err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(ctx, spans); err == nil {
		t.Error("an export after Shutdown succeeded")
	}
	if _, err := newOTLPHTTPTraces(&static.OTLPHTTP{Endpoint: "http://collector:4318/v1/traces", TLS: &config.ClientTLS{}}, traceEnv{}); err == nil {
		t.Error("an http endpoint with a TLS configuration was accepted")
	}
}

// TestTraceEnv: the OTEL_EXPORTER_OTLP_* variables the exporter reads
// (the TRACES_ ones first; ENDPOINT a base URL), and a malformed one left
// out with an error naming it; the configuration's endpoint and headers
// win over them; with COMPRESSION=gzip the body is gzipped (the
// collector above decodes it to the same spans).
func TestTraceEnv(t *testing.T) {
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://base:4318/otlp",
		"OTEL_EXPORTER_OTLP_HEADERS":         "a=1",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":  "X-Tenant=t%202, b = x ",
		"OTEL_EXPORTER_OTLP_TIMEOUT":         "2500",
		"OTEL_EXPORTER_OTLP_COMPRESSION":     "gzip",
		"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT":  "",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
	}
	e, err := readTraceEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if e.endpoint != "http://base:4318/otlp/v1/traces" || len(e.headers) != 2 || e.headers["X-Tenant"] != "t 2" || e.headers["b"] != "x" ||
		e.timeout != 2500*time.Millisecond || !e.gzip {
		t.Errorf("read %+v", e)
	}
	env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "https://traces:4318"
	env["OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"] = "zstd"
	if e, err = readTraceEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION") {
		t.Errorf("a bad compression: %v", err)
	}
	if e.endpoint != "https://traces:4318" || e.gzip {
		t.Errorf("read %+v", e)
	}

	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	exp, err := newOTLPHTTPTraces(&static.OTLPHTTP{Endpoint: srv.URL + "/v1/traces"}, traceEnv{endpoint: "http://elsewhere:1/", headers: map[string]string{"X-Tenant": "env"}, gzip: true})
	if err != nil {
		t.Fatal(err)
	}
	spans := testSpans(t)
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	plain, _ := newOTLPHTTPTraces(&static.OTLPHTTP{Endpoint: srv.URL + "/v1/traces", Headers: map[string]string{"X-Tenant": "t1"}}, traceEnv{headers: map[string]string{"X-Tenant": "env"}})
	if err := plain.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	if len(c.bodies) != 2 || string(c.bodies[0]) != string(c.bodies[1]) {
		t.Fatalf("%d requests; the gzipped one decodes to another body", len(c.bodies))
	}
	if c.types[0] != "POST /v1/traces application/x-protobuf env" || c.types[1] != "POST /v1/traces application/x-protobuf t1" {
		t.Errorf("requests %q", c.types)
	}
}

// TestTraceEnvTLS: OTEL_EXPORTER_OTLP_[TRACES_]CERTIFICATE is the CA an
// https collector's certificate is checked against, as in the OpenTelemetry
// exporter (without it the system roots refuse a private CA); a client
// certificate without its key is an error naming the variables.
func TestTraceEnvTLS(t *testing.T) {
	c := &collector{}
	srv := httptest.NewTLSServer(c)
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": ca}
	e, err := readTraceEnv(func(k string) string { return env[k] })
	if err != nil || e.tls == nil || e.tls.CA != ca {
		t.Fatalf("read %+v, %v", e, err)
	}
	spans := testSpans(t)[:1]
	exp, err := newOTLPHTTPTraces(&static.OTLPHTTP{Endpoint: srv.URL + "/v1/traces"}, e)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatalf("with the collector's CA from the environment: %v", err)
	}
	if len(c.bodies) != 1 {
		t.Fatalf("%d requests reached the collector, want 1", len(c.bodies))
	}
	plain, err := newOTLPHTTPTraces(&static.OTLPHTTP{Endpoint: srv.URL + "/v1/traces"}, traceEnv{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := plain.ExportSpans(ctx, spans); err == nil {
		t.Error("the collector's private CA was trusted without the CERTIFICATE variable")
	}
	env["OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"] = ca
	if e, err = readTraceEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	_, err = newOTLPHTTPTraces(&static.OTLPHTTP{Endpoint: srv.URL + "/v1/traces"}, e)
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE") {
		t.Errorf("a client certificate without its key: %v, want an error naming the variable", err)
	}
}
