package dashboard

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// span is one received span, flattened.
type span struct {
	name, traceID, spanID, parentID string
	kind                            tracepb.Span_SpanKind
	attrs                           map[string]string
	resource                        map[string]string
	status                          tracepb.Status_StatusCode
}

// receiver collects the spans of OTLP export requests, over HTTP
// (/v1/traces, protobuf) or gRPC (TraceService/Export).
type receiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []span
}

func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.Values {
			parts = append(parts, anyString(e))
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v.GetValue())
}

func kvs(list []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range list {
		out[kv.Key] = anyString(kv.Value)
	}
	return out
}

func (rc *receiver) add(req *coltracepb.ExportTraceServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		res := kvs(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				rc.spans = append(rc.spans, span{
					name: s.Name, traceID: hex.EncodeToString(s.TraceId), spanID: hex.EncodeToString(s.SpanId),
					parentID: hex.EncodeToString(s.ParentSpanId), kind: s.Kind, attrs: kvs(s.Attributes), resource: res,
					status: s.GetStatus().GetCode(),
				})
			}
		}
	}
}

func (rc *receiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	rc.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req coltracepb.ExportTraceServiceRequest
	if _, ok := readOTLPExport(w, r, "/v1/traces", &req); !ok {
		return
	}
	rc.add(&req)
	writeOTLPResponse(w, &coltracepb.ExportTraceServiceResponse{})
}

func (rc *receiver) trace(id string) []span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []span
	for _, s := range rc.spans {
		if s.traceID == id {
			out = append(out, s)
		}
	}
	return out
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.spans)
}

// tracedBackend records the traceparent of each request it gets.
type tracedBackend struct {
	mu     sync.Mutex
	parent map[string]string // request path -> traceparent received
}

func (b *tracedBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.parent[r.URL.Path] = r.Header.Get("Traceparent")
	b.mu.Unlock()
	_, _ = io.WriteString(w, "ok")
}

func (b *tracedBackend) got(path string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.parent[path]
}

func tracingGantry(t *testing.T, backend, tracing string) (*harness.Gantry, string) {
	t.Helper()
	dir := t.TempDir()
	harness.WriteFile(t, dir, "dynamic.yml", fmt.Sprintf(`http:
  routers:
    traced:
      entryPoints: [web]
      rule: Host(`+"`traced.example`"+`)
      service: traced
  services:
    traced:
      loadBalancer:
        servers:
          - url: "%s"
`, backend))
	g := harness.Start(t, fmt.Sprintf(`entryPoints:
  web:
    address: "%s"
  traefik:
    address: "%s"
api:
  insecure: true
metrics:
  prometheus: {}
tracing:
%s
providers:
  providersThrottleDuration: 50ms
  file:
    directory: "%s"
`, harness.FreeAddr(t), harness.FreeAddr(t), tracing, dir), "OTEL_BSP_SCHEDULE_DELAY=200") // export batches every 200 ms, not 5 s
	admin := g.URL(t, "traefik", "")
	harness.TryGet(t, 60*time.Second, admin+"/api/http/routers", harness.StatusIs(200), harness.BodyContains(`"name":"traced@file"`))
	return g, admin
}

func get(t *testing.T, url, host string, hdr ...string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Host = host
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
}

// TestTracingOTLPHTTP: a request carrying a caller's traceparent produces
// Traefik's spans (EntryPoint server → Router → ReverseProxy client) in
// the caller's trace, each the child of the previous, with Traefik's
// attributes and the configured resource attributes; the backend receives
// a traceparent whose parent is the ReverseProxy span. A scrape of
// /metrics (internal) is not traced.
func TestTracingOTLPHTTP(t *testing.T) {
	rc := &receiver{}
	collector := httptest.NewServer(rc)
	defer collector.Close()
	be := &tracedBackend{parent: map[string]string{}}
	backend := httptest.NewServer(be)
	defer backend.Close()
	g, admin := tracingGantry(t, backend.URL, fmt.Sprintf(`  serviceName: edge
  sampleRate: 1.0
  resourceAttributes:
    deployment.environment: test
  capturedRequestHeaders: [X-Request-Id]
  otlp:
    http:
      endpoint: "%s/v1/traces"`, collector.URL))

	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	harness.TryGet(t, 60*time.Second, admin+"/metrics", harness.StatusIs(200))
	get(t, g.URL(t, "web", "/hello?token=secret"), "traced.example", "Traceparent", "00-"+callerTrace+"-"+callerSpan+"-01", "X-Request-Id", "req-42")

	var spans []span
	harness.Try(t, 60*time.Second, func() error {
		if spans = rc.trace(callerTrace); len(spans) < 3 {
			return fmt.Errorf("%d spans of the caller's trace received", len(spans))
		}
		return nil
	})
	byName := map[string]span{}
	for _, s := range spans {
		byName[s.name] = s
	}
	ep, rt, rp := byName["EntryPoint"], byName["Router"], byName["ReverseProxy"]
	if ep.kind != tracepb.Span_SPAN_KIND_SERVER || rt.kind != tracepb.Span_SPAN_KIND_INTERNAL || rp.kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("span kinds: EntryPoint %v, Router %v, ReverseProxy %v", ep.kind, rt.kind, rp.kind)
	}
	if ep.parentID != callerSpan || rt.parentID != ep.spanID || rp.parentID != rt.spanID {
		t.Errorf("parents: EntryPoint←%s (want caller %s), Router←%s (want %s), ReverseProxy←%s (want %s)",
			ep.parentID, callerSpan, rt.parentID, ep.spanID, rp.parentID, rt.spanID)
	}
	tp := be.got("/hello")
	if want := "00-" + callerTrace + "-" + rp.spanID + "-01"; tp != want {
		t.Errorf("backend got traceparent %q, want %q (the ReverseProxy span as parent)", tp, want)
	}
	for span, want := range map[*span]map[string]string{
		&ep: {"entry_point": "web", "http.request.method": "GET", "url.path": "/hello", "url.query": "token=REDACTED",
			"http.response.status_code": "200", "server.address": "traced.example", "network.protocol.version": "1.1",
			"http.request.header.x-request-id": "req-42", "client.address": "127.0.0.1"},
		&rt: {"traefik.router.name": "traced@file", "traefik.service.name": "traced@file", "http.route": "Host(`traced.example`)"},
		&rp: {"http.request.method": "GET", "url.full": backend.URL + "/hello?token=REDACTED", "server.address": "127.0.0.1",
			"http.response.status_code": "200"},
	} {
		for k, v := range want {
			if span.attrs[k] != v {
				t.Errorf("%s: %s = %q, want %q", span.name, k, span.attrs[k], v)
			}
		}
	}
	if ep.resource["service.name"] != "edge" || ep.resource["deployment.environment"] != "test" {
		t.Errorf("resource %v, want service.name edge and deployment.environment test", ep.resource)
	}
	rc.mu.Lock()
	for _, s := range rc.spans {
		if strings.Contains(s.attrs["url.path"], "/metrics") || strings.HasSuffix(s.attrs["traefik.router.name"], "@internal") {
			t.Errorf("an internal request is traced: %+v", s)
		}
	}
	rc.mu.Unlock()
}

// TestTracingSamplingOTLPGRPC: with sampleRate 0 over gRPC, requests that
// start a trace are not exported, yet the backend still gets a traceparent
// (flag 00) continuing the caller-less trace; a caller that sampled its
// trace (flag 01) is followed (parent-based sampling) and exported.
func TestTracingSamplingOTLPGRPC(t *testing.T) {
	rc := &receiver{}
	lis := serveOTLPGRPC(t, func(s *grpc.Server) { coltracepb.RegisterTraceServiceServer(s, rc) })
	be := &tracedBackend{parent: map[string]string{}}
	backend := httptest.NewServer(be)
	defer backend.Close()
	g, _ := tracingGantry(t, backend.URL, fmt.Sprintf(`  sampleRate: 0
  otlp:
    grpc:
      endpoint: "%s"
      insecure: true`, lis))
	for i := range 20 {
		get(t, g.URL(t, "web", fmt.Sprintf("/u%d", i)), "traced.example")
	}
	const sampledTrace = "0af7651916cd43dd8448eb211c80319c"
	get(t, g.URL(t, "web", "/sampled"), "traced.example", "Traceparent", "00-"+sampledTrace+"-b7ad6b7169203331-01")
	harness.Try(t, 60*time.Second, func() error {
		if n := len(rc.trace(sampledTrace)); n < 3 {
			return fmt.Errorf("%d spans of the sampled caller's trace", n)
		}
		return nil
	})
	if n, m := rc.count(), len(rc.trace(sampledTrace)); n != m {
		t.Errorf("%d spans exported, %d of them the sampled caller's: unsampled requests were exported", n, m)
	}
	for i := range 20 {
		tp := be.got(fmt.Sprintf("/u%d", i))
		if len(tp) != 55 || !strings.HasSuffix(tp, "-00") {
			t.Errorf("unsampled request %d: backend got traceparent %q, want one with flags 00", i, tp)
		}
	}
	if tp := be.got("/sampled"); !strings.HasPrefix(tp, "00-"+sampledTrace+"-") || !strings.HasSuffix(tp, "-01") {
		t.Errorf("sampled request: backend got %q", tp)
	}
}
