package dashboard

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // the exporter compresses with gzip

	"github.com/gantry-proxy/gantry/integration/harness"
)

// point is the latest value of one metric stream (name + attributes).
type point struct {
	name, unit string
	attrs      map[string]string
	value      float64   // sum or gauge
	count      uint64    // histogram
	bounds     []float64 // histogram
	monotonic  bool
}

// metricsReceiver keeps the latest data point of each stream of the OTLP
// metric exports it gets (cumulative temporality: the latest is the total).
type metricsReceiver struct {
	colmetricpb.UnimplementedMetricsServiceServer
	mu       sync.Mutex
	points   map[string]point
	resource map[string]string
	exports  int
	gzipped  bool
	tenant   string // the X-Tenant header of the last HTTP export
}

func streamKey(name string, attrs map[string]string) string {
	keys := make([]string, 0, len(attrs))
	for k, v := range attrs {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	return name + "{" + strings.Join(keys, ",") + "}"
}

func (rc *metricsReceiver) add(req *colmetricpb.ExportMetricsServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.points == nil {
		rc.points = map[string]point{}
	}
	rc.exports++
	for _, rm := range req.ResourceMetrics {
		rc.resource = kvs(rm.GetResource().GetAttributes())
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				put := func(p point) {
					p.name, p.unit = m.Name, m.Unit
					rc.points[streamKey(m.Name, p.attrs)] = p
				}
				switch d := m.Data.(type) {
				case *metricpb.Metric_Sum:
					for _, dp := range d.Sum.DataPoints {
						put(point{attrs: kvs(dp.Attributes), value: dp.GetAsDouble() + float64(dp.GetAsInt()), monotonic: d.Sum.IsMonotonic})
					}
				case *metricpb.Metric_Gauge:
					for _, dp := range d.Gauge.DataPoints {
						put(point{attrs: kvs(dp.Attributes), value: dp.GetAsDouble() + float64(dp.GetAsInt())})
					}
				case *metricpb.Metric_Histogram:
					for _, dp := range d.Histogram.DataPoints {
						put(point{attrs: kvs(dp.Attributes), count: dp.Count, bounds: dp.ExplicitBounds, value: dp.GetSum()})
					}
				}
			}
		}
	}
}

func (rc *metricsReceiver) Export(_ context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	rc.add(req)
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

func (rc *metricsReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	var req colmetricpb.ExportMetricsServiceRequest
	gzipped, ok := readOTLPExport(w, r, "/v1/metrics", &req)
	if gzipped {
		rc.mu.Lock()
		rc.gzipped = true
		rc.mu.Unlock()
	}
	if !ok {
		return
	}
	rc.mu.Lock()
	rc.tenant = r.Header.Get("X-Tenant")
	rc.mu.Unlock()
	rc.add(&req)
	writeOTLPResponse(w, &colmetricpb.ExportMetricsServiceResponse{})
}

// find returns the points of name whose attributes include want.
func (rc *metricsReceiver) find(name string, want map[string]string) []point {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []point
	for _, p := range rc.points {
		if p.name != name {
			continue
		}
		ok := true
		for k, v := range want {
			if p.attrs[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

func (rc *metricsReceiver) one(t *testing.T, name string, want map[string]string) point {
	t.Helper()
	ps := rc.find(name, want)
	if len(ps) != 1 {
		t.Errorf("%s%v: %d streams, want 1", name, want, len(ps))
		return point{}
	}
	return ps[0]
}

// otlpMetricsGantry starts gantry with metrics.otlp (otlp: the section's
// body) and routers: ok (a backend answering 200, or 500 on /fail), flaky
// (a dead server and a live one: dial retries), the unrouted rest.
func otlpMetricsGantry(t *testing.T, otlp string) (g *harness.Gantry, dead string) {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
		}
		if r.URL.Path == "/slow" {
			time.Sleep(1500 * time.Millisecond)
		}
		_, _ = io.WriteString(w, "hello")
	}))
	t.Cleanup(backend.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead = "http://" + l.Addr().String()
	l.Close() // connections to it are refused
	dir := t.TempDir()
	harness.WriteFile(t, dir, "dynamic.yml", fmt.Sprintf(`http:
  routers:
    ok:
      entryPoints: [web]
      rule: Host(`+"`ok.example`"+`)
      service: ok
    flaky:
      entryPoints: [web]
      rule: Host(`+"`flaky.example`"+`)
      service: flaky
  services:
    ok:
      loadBalancer:
        servers:
          - url: "%[1]s"
    flaky:
      loadBalancer:
        servers:
          - url: "%[2]s"
          - url: "%[1]s"
`, backend.URL, dead))
	g = harness.Start(t, fmt.Sprintf(`entryPoints:
  web:
    address: "%s"
  traefik:
    address: "%s"
api:
  insecure: true
metrics:
  otlp:
%s
providers:
  providersThrottleDuration: 50ms
  file:
    directory: "%s"
`, harness.FreeAddr(t), harness.FreeAddr(t), otlp, dir))
	admin := g.URL(t, "traefik", "")
	harness.TryGet(t, 60*time.Second, admin+"/api/http/routers", harness.StatusIs(200), harness.BodyContains(`"name":"flaky@file"`))
	return g, dead
}

func send(t *testing.T, method, url, host, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body == "" {
		req.Body = http.NoBody
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestOTLPMetricsHTTP: after a scripted mix (5 GET 200, 2 GET 500, 1 POST
// with a 7-byte body, 4 requests to a service whose first server refuses
// connections, 1 unrouted) the OTLP export over HTTP (gzip) carries
// Traefik's instrument names, attributes and values: the entrypoint,
// router and service counters, the duration histograms with the configured
// boundaries, retries, server up/down, reloads, open connections, and the
// semantic-convention histograms (one http.client.request.duration point
// per attempt); the resource has serviceName and resourceAttributes.
func TestOTLPMetricsHTTP(t *testing.T) {
	rc := &metricsReceiver{}
	collector := httptest.NewServer(rc)
	t.Cleanup(collector.Close)
	g, dead := otlpMetricsGantry(t, fmt.Sprintf(`    pushInterval: 300ms
    serviceName: edge
    addRoutersLabels: true
    explicitBoundaries: [0.01, 0.1, 1]
    resourceAttributes:
      deployment.environment: test
    http:
      endpoint: "%s"
      headers:
        X-Tenant: acme`, collector.URL))
	web := g.URL(t, "web", "")
	for range 5 {
		if c := send(t, "GET", web+"/a", "ok.example", ""); c != 200 {
			t.Fatalf("GET ok: %d", c)
		}
	}
	for range 2 {
		send(t, "GET", web+"/fail", "ok.example", "")
	}
	send(t, "POST", web+"/post", "ok.example", "payload")
	for range 4 {
		if c := send(t, "GET", web+"/f", "flaky.example", ""); c != 200 {
			t.Fatalf("GET flaky: %d", c)
		}
	}
	if c := send(t, "GET", web+"/", "nobody.example", ""); c != 404 {
		t.Fatalf("unrouted: %d", c)
	}

	ep := map[string]string{"entrypoint": "web", "method": "GET", "protocol": "http"}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	checks := []struct {
		name  string
		attrs map[string]string
		want  float64
	}{
		{"traefik_entrypoint_requests_total", with(ep, "code", "500"), 2},
		{"traefik_entrypoint_requests_total", with(ep, "code", "404"), 1},
		{"traefik_entrypoint_requests_total", map[string]string{"code": "200", "method": "POST", "protocol": "http", "entrypoint": "web"}, 1},
		{"traefik_entrypoint_requests_bytes_total", map[string]string{"code": "200", "method": "POST", "protocol": "http", "entrypoint": "web"}, 7},
		{"traefik_entrypoint_responses_bytes_total", with(ep, "code", "500"), 10},
		{"traefik_router_requests_total", map[string]string{"code": "200", "method": "GET", "protocol": "http", "router": "ok@file", "service": "ok@file"}, 5},
		{"traefik_router_requests_total", map[string]string{"code": "200", "method": "GET", "protocol": "http", "router": "flaky@file", "service": "flaky@file"}, 4},
		{"traefik_service_requests_total", map[string]string{"code": "500", "method": "GET", "protocol": "http", "service": "ok@file"}, 2},
		{"traefik_service_requests_total", map[string]string{"code": "200", "method": "GET", "protocol": "http", "service": "flaky@file"}, 4},
		{"traefik_config_reloads_total", nil, -1},
		{"traefik_service_server_up", map[string]string{"service": "ok@file"}, 1},
	}
	// A request is counted after its response is written, and pushed at
	// the next export: wait until a push holds every count (the unrouted
	// request, sent last, may be in the push after the one with the 200s).
	harness.Try(t, 60*time.Second, func() error {
		ps := rc.find("traefik_entrypoint_requests_total", with(ep, "code", "200"))
		if len(ps) != 1 || ps[0].value != 9 {
			return fmt.Errorf("traefik_entrypoint_requests_total{code=200}: %+v, want 9", ps)
		}
		for _, c := range checks {
			if ps := rc.find(c.name, c.attrs); c.want >= 0 && (len(ps) != 1 || ps[0].value != c.want) {
				return fmt.Errorf("%s%v: %+v, want %v", c.name, c.attrs, ps, c.want)
			}
		}
		if ps := rc.find("http.client.request.duration", map[string]string{"server.address": strings.TrimPrefix(dead, "http://")}); len(ps) == 0 {
			return fmt.Errorf("no http.client.request.duration for the refused server yet")
		}
		return nil
	})
	for _, c := range checks {
		p := rc.one(t, c.name, c.attrs)
		if c.want >= 0 && p.value != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.attrs, p.value, c.want)
		}
		if c.want < 0 && p.value < 1 {
			t.Errorf("%s = %v, want >= 1", c.name, p.value)
		}
		if strings.HasSuffix(c.name, "_total") && (!p.monotonic || p.unit != "1") {
			t.Errorf("%s: monotonic %v unit %q, want a monotonic sum with unit 1", c.name, p.monotonic, p.unit)
		}
	}
	for _, p := range rc.find("traefik_entrypoint_requests_total", nil) {
		if keys := slices.Sorted(mapKeys(p.attrs)); !slices.Equal(keys, []string{"code", "entrypoint", "method", "protocol"}) {
			t.Errorf("traefik_entrypoint_requests_total attributes %v, want Traefik's code, entrypoint, method, protocol", keys)
		}
	}
	// Retries: each refused attempt is a retry and a code=502 service attempt.
	retries := rc.one(t, "traefik_service_retries_total", map[string]string{"service": "flaky@file"}).value
	if retries < 1 {
		t.Errorf("traefik_service_retries_total{flaky} = %v, want >= 1 (4 requests round-robin over a dead server)", retries)
	}
	if p := rc.one(t, "traefik_service_requests_total", map[string]string{"code": "502", "service": "flaky@file"}); p.value != retries {
		t.Errorf("service code=502 attempts %v, want the %v retries", p.value, retries)
	}
	if p := rc.one(t, "traefik_service_server_up", map[string]string{"url": dead}); p.value != 0 && p.value != 1 {
		t.Errorf("server_up of the dead server %v", p.value)
	}
	// Histograms: the configured boundaries, one count per request.
	h := rc.one(t, "traefik_entrypoint_request_duration_seconds", with(ep, "code", "200"))
	if h.count != 9 || !slices.Equal(h.bounds, []float64{0.01, 0.1, 1}) || h.unit != "s" {
		t.Errorf("entrypoint duration histogram: count %d bounds %v unit %q, want 9, [0.01 0.1 1], s", h.count, h.bounds, h.unit)
	}
	h = rc.one(t, "traefik_service_request_duration_seconds", map[string]string{"code": "200", "service": "flaky@file"})
	if h.count != 4 {
		t.Errorf("flaky service duration count %d, want 4", h.count)
	}
	if ps := rc.find("traefik_open_connections", map[string]string{"entrypoint": "web", "protocol": "TCP"}); len(ps) != 1 {
		t.Errorf("traefik_open_connections{web,TCP}: %d streams", len(ps))
	}
	if ps := rc.find("traefik_config_last_reload_success", nil); len(ps) != 1 || ps[0].value < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("traefik_config_last_reload_success: %+v", ps)
	}
	// Semantic conventions: the server histogram per request at the entrypoint.
	srv := rc.one(t, "http.server.request.duration", map[string]string{"http.response.status_code": "500", "http.request.method": "GET"})
	for k, v := range map[string]string{"error.type": "500", "network.protocol.name": "http/1.1", "network.protocol.version": "1.1",
		"server.address": "ok.example", "http.route": "Host(`ok.example`)", "url.scheme": "http"} {
		if srv.attrs[k] != v {
			t.Errorf("http.server.request.duration %s = %q, want %q", k, srv.attrs[k], v)
		}
	}
	if srv.count != 2 || !slices.Equal(srv.bounds, []float64{0.01, 0.1, 1}) {
		t.Errorf("http.server.request.duration{500}: count %d bounds %v", srv.count, srv.bounds)
	}
	if p := rc.one(t, "http.server.request.duration", map[string]string{"http.response.status_code": "404", "server.address": "nobody.example"}); p.attrs["http.route"] != "" || p.count != 1 {
		t.Errorf("unrouted request: %+v, want one point without http.route", p)
	}
	// One client point per attempt: the refused ones (502) and the answered.
	refused := rc.one(t, "http.client.request.duration", map[string]string{"server.address": strings.TrimPrefix(dead, "http://")})
	if refused.count != uint64(retries) || refused.attrs["error.type"] != "502" || refused.attrs["http.response.status_code"] != "502" {
		t.Errorf("attempts on the refused server: %+v, want %v with error.type 502", refused, retries)
	}
	var answered uint64
	for _, p := range rc.find("http.client.request.duration", map[string]string{"http.response.status_code": "200"}) {
		answered += p.count
	}
	if answered != 10 { // 5 + 1 POST on ok, 4 on flaky
		t.Errorf("answered attempts %d, want 10", answered)
	}
	rc.mu.Lock()
	res, gz, tenant := rc.resource, rc.gzipped, rc.tenant
	rc.mu.Unlock()
	if tenant != "acme" {
		t.Errorf("export header X-Tenant %q, want acme (http.headers)", tenant)
	}
	if res["service.name"] != "edge" || res["deployment.environment"] != "test" || res["service.version"] == "" {
		t.Errorf("resource %v, want service.name edge, deployment.environment test and service.version", res)
	}
	if !gz {
		t.Error("exports were not gzip-compressed (Traefik compresses)")
	}
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestOTLPMetricsGRPC: the same export over gRPC (insecure); by default
// router attributes are off (no traefik_router_*), entrypoint and service
// ones on, and the histograms use Traefik's default boundaries.
func TestOTLPMetricsGRPC(t *testing.T) {
	rc := &metricsReceiver{}
	lis := serveOTLPGRPC(t, func(s *grpc.Server) { colmetricpb.RegisterMetricsServiceServer(s, rc) })
	g, _ := otlpMetricsGantry(t, fmt.Sprintf(`    pushInterval: 300ms
    grpc:
      endpoint: "%s"
      insecure: true`, lis))
	for range 3 {
		send(t, "GET", g.URL(t, "web", "/a"), "ok.example", "")
	}
	harness.Try(t, 60*time.Second, func() error {
		if ps := rc.find("traefik_service_requests_total", map[string]string{"code": "200", "service": "ok@file"}); len(ps) != 1 || ps[0].value != 3 {
			return fmt.Errorf("traefik_service_requests_total{ok}: %+v, want 3", ps)
		}
		return nil
	})
	if ps := rc.find("traefik_router_requests_total", nil); len(ps) != 0 {
		t.Errorf("router metrics exported without addRoutersLabels: %+v", ps)
	}
	h := rc.one(t, "traefik_entrypoint_request_duration_seconds", map[string]string{"code": "200"})
	if want := []float64{.005, .01, .025, .05, .075, .1, .25, .5, .75, 1, 2.5, 5, 7.5, 10}; !slices.Equal(h.bounds, want) {
		t.Errorf("default boundaries %v, want Traefik's %v", h.bounds, want)
	}
	rc.mu.Lock()
	name := rc.resource["service.name"]
	rc.mu.Unlock()
	if name != "gantry" {
		t.Errorf("service.name %q, want the default gantry", name)
	}
}

// TestOTLPMetricsPushedAfterDrain: SIGTERM with a request in flight. The
// push at shutdown comes after the drain, so it counts the request that
// finished during it (it used to come before the drain: what was served
// while draining was never exported).
func TestOTLPMetricsPushedAfterDrain(t *testing.T) {
	rc := &metricsReceiver{}
	collector := httptest.NewServer(rc)
	t.Cleanup(collector.Close)
	g, _ := otlpMetricsGantry(t, fmt.Sprintf(`    pushInterval: 1h
    http:
      endpoint: "%s"`, collector.URL))
	code := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("GET", g.URL(t, "web", "/slow"), http.NoBody)
		req.Host = "ok.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			code <- -1
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		code <- resp.StatusCode
	}()
	time.Sleep(500 * time.Millisecond) // the request is at the backend (1.5 s)
	if err := g.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if c := <-code; c != 200 {
		t.Fatalf("the request in flight at SIGTERM: %d, want 200", c)
	}
	g.Wait(t, 30*time.Second)
	ps := rc.find("traefik_entrypoint_requests_total", map[string]string{"code": "200", "entrypoint": "web"})
	if len(ps) != 1 || ps[0].value != 1 {
		t.Fatalf("traefik_entrypoint_requests_total{code=200} in the last push: %+v, want the request drained at shutdown (1)", ps)
	}
}
