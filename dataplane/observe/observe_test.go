package observe

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)

func event(router string, status int, d time.Duration) *RequestEvent {
	return &RequestEvent{
		Start: t0, Duration: d, EntryPoint: "web", Router: router, Service: "api@file",
		Upstream: "http://10.0.0.1:80", Method: "GET", Host: "example.com:8000", Path: "/a?b=c",
		Proto: "HTTP/1.1", ClientAddr: "192.0.2.7:5555", Status: status, BytesOut: 42,
		Header: http.Header{
			"User-Agent":    {"curl/8"},
			"Referer":       {"http://ref/"},
			"Authorization": {"Basic YWxpY2U6c2VjcmV0"}, // alice:secret
			"X-Token":       {"t0ps3cret"},
		},
		ResponseHeader: http.Header{"Content-Type": {"text/plain"}},
	}
}

func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape status %d", rec.Code)
	}
	return rec.Body.String()
}

func TestMetricsCountersAndGauges(t *testing.T) {
	servers := []ServerUp{{Service: "api@file", URL: "http://10.0.0.1:80", Up: true}, {Service: "api@file", URL: "http://10.0.0.2:80", Up: false}}
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: "example.com"}, SerialNumber: big.NewInt(7), DNSNames: []string{"example.com", "www.example.com"}, NotAfter: t0.Add(24 * time.Hour)}
	m := NewMetrics(MetricsOptions{
		Prometheus:   &static.Prometheus{AddRoutersLabels: true},
		Servers:      func() []ServerUp { return servers },
		Certificates: func() []*x509.Certificate { return []*x509.Certificate{cert} },
	})
	for range 3 {
		m.Request(event("web@file", 200, 3*time.Millisecond))
	}
	m.Request(event("web@file", 502, time.Second))
	noRoute := event("", 404, time.Millisecond)
	noRoute.Service = ""
	m.Request(noRoute)
	retried := event("web@file", 200, time.Millisecond)
	retried.Retries = 2
	m.Request(retried)
	m.Conn("web", "http", 1)
	m.Conn("web", "http", 1)
	m.Conn("web", "http", -1)
	m.ConfigReloaded(t0)

	out := scrape(t, m.Handler())
	for _, want := range []string{
		`traefik_entrypoint_requests_total{code="200",entrypoint="web",method="GET",protocol="http"} 4`,
		`traefik_entrypoint_requests_total{code="502",entrypoint="web",method="GET",protocol="http"} 1`,
		`traefik_entrypoint_requests_total{code="404",entrypoint="web",method="GET",protocol="http"} 1`,
		`traefik_router_requests_total{code="200",method="GET",protocol="http",router="web@file",service="api@file"} 4`,
		// Per attempt: one 502 answer, and the two refused attempts of the
		// retried request (instant, code 502); its final answer is a 200.
		`traefik_service_requests_total{code="502",method="GET",protocol="http",service="api@file"} 3`,
		`traefik_service_requests_total{code="200",method="GET",protocol="http",service="api@file"} 4`,
		`traefik_service_request_duration_seconds_bucket{code="502",method="GET",protocol="http",service="api@file",le="1.2"} 3`,
		`traefik_service_request_duration_seconds_bucket{code="502",method="GET",protocol="http",service="api@file",le="0.3"} 2`,
		`traefik_service_retries_total{service="api@file"} 2`,
		`traefik_service_server_up{service="api@file",url="http://10.0.0.1:80"} 1`,
		`traefik_service_server_up{service="api@file",url="http://10.0.0.2:80"} 0`,
		`traefik_open_connections{entrypoint="web",protocol="TCP"} 1`,
		`traefik_config_reloads_total 1`,
		`traefik_config_last_reload_success 1.7959824e+09`,
		`traefik_tls_certs_not_after{cn="example.com",sans="example.com,www.example.com",serial="7"} 1.7960688e+09`,
		`traefik_entrypoint_responses_bytes_total{code="200",entrypoint="web",method="GET",protocol="http"} 168`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s\n--- got:\n%s", want, out)
		}
	}
}

func TestMetricsLabelDefaults(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	m.Request(event("web@file", 200, time.Millisecond))
	out := scrape(t, m.Handler())
	if strings.Contains(out, "traefik_router_requests_total") {
		t.Errorf("router metrics present although addRoutersLabels is off (Traefik default)")
	}
	if !strings.Contains(out, "traefik_service_requests_total") || !strings.Contains(out, "traefik_entrypoint_requests_total") {
		t.Errorf("entrypoint or service metrics missing by default:\n%s", out)
	}
}

func TestProtocolAndMethodLabels(t *testing.T) {
	tests := []struct {
		name   string
		h      http.Header
		method string
		proto  string
		meth   string
	}{
		{"plain", http.Header{}, "GET", "http", "GET"},
		{"websocket", http.Header{"Connection": {"keep-alive, Upgrade"}, "Upgrade": {"WebSocket"}}, "GET", "websocket", "GET"},
		{"upgrade without Connection", http.Header{"Upgrade": {"websocket"}}, "GET", "http", "GET"},
		{"sse", http.Header{"Accept": {"text/event-stream"}}, "GET", "sse", "GET"},
		{"grpc", http.Header{"Content-Type": {"application/grpc+proto"}}, "POST", "grpc", "POST"},
		{"grpc-web", http.Header{"Content-Type": {"application/grpc-web-text"}}, "POST", "grpc-web", "POST"},
		{"extension", nil, "PROPFIND", "http", "EXTENSION_METHOD"},
		{"h2 preface", nil, "PRI", "http", "PRI"},
		{"not utf-8", nil, "G\xffT", "http", "NON_UTF8_HTTP_METHOD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := protocolLabel(tt.h); got != tt.proto {
				t.Errorf("protocol: got %q, want %q", got, tt.proto)
			}
			if got := methodLabel(tt.method); got != tt.meth {
				t.Errorf("method: got %q, want %q", got, tt.meth)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the writer goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runLog feeds events through a running AccessLog and returns its output
// once Run has drained the queue.
func runLog(t *testing.T, c *static.AccessLog, evs ...*RequestEvent) string {
	t.Helper()
	var buf syncBuffer
	a, err := NewAccessLog(&buf, c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	for _, ev := range evs {
		a.Request(ev)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestAccessLogCommon(t *testing.T) {
	// Referer and User-Agent are headers: dropped by default, as in Traefik.
	got := runLog(t, nil, event("web@file", 200, 12*time.Millisecond))
	want := `192.0.2.7 - alice [29/Nov/2026:20:00:00 +0000] "GET /a?b=c HTTP/1.1" 200 42 "-" "-" 1 "web@file" "http://10.0.0.1:80" 12ms` + "\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	kept := &static.AccessLog{Fields: &static.AccessLogFields{Headers: &static.FieldHeaders{Names: map[string]string{"user-agent": "keep", "Referer": "redact"}}}}
	got = runLog(t, kept, event("web@file", 200, 12*time.Millisecond))
	want = `192.0.2.7 - alice [29/Nov/2026:20:00:00 +0000] "GET /a?b=c HTTP/1.1" 200 42 "REDACTED" "curl/8" 1 "web@file" "http://10.0.0.1:80" 12ms` + "\n"
	if got != want {
		t.Errorf("headers kept: got  %q\nwant %q", got, want)
	}
	internal := event("api@internal", 200, time.Millisecond)
	internal.Service = "api@internal"
	if got := runLog(t, nil, internal); got != "" {
		t.Errorf("internal request logged without addInternals: %q", got)
	}
	if got := runLog(t, &static.AccessLog{AddInternals: true}, internal); !strings.Contains(got, `"api@internal"`) {
		t.Errorf("addInternals: internal request not logged: %q", got)
	}
	noRoute := event("", 404, 0)
	noRoute.Upstream = ""
	noRoute.Header = nil
	got = runLog(t, &static.AccessLog{Fields: &static.AccessLogFields{Names: map[string]string{"ClientHost": "redact"}}}, noRoute)
	want = `REDACTED - - [29/Nov/2026:20:00:00 +0000] "GET /a?b=c HTTP/1.1" 404 42 "-" "-" 1 "-" "-" 0ms` + "\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestAccessLogJSONFieldsAndHeaders(t *testing.T) {
	ev := event("web@file", 201, 1500*time.Microsecond)
	ev.Upstream = "http://bob:hunter2@10.0.0.1:80"
	out := runLog(t, &static.AccessLog{Format: "json", Fields: &static.AccessLogFields{
		Names: map[string]string{"ClientPort": "drop", "ClientAddr": "redact"},
		Headers: &static.FieldHeaders{DefaultMode: "keep", Names: map[string]string{
			"authorization": "redact", "X-Token": "drop",
		}},
	}}, ev)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, out)
	}
	want := map[string]any{
		"ClientAddr": "REDACTED", "ClientHost": "192.0.2.7", "ClientUsername": "alice",
		"DownstreamStatus": 201.0, "DownstreamContentSize": 42.0, "Duration": 1.5e6,
		"RequestHost": "example.com", "RequestPort": "8000", "RequestMethod": "GET", "RequestPath": "/a?b=c",
		"RequestScheme": "http", "RouterName": "web@file", "ServiceName": "api@file",
		"ServiceURL": "http://bob:REDACTED@10.0.0.1:80", "ServiceAddr": "10.0.0.1:80", "entryPointName": "web",
		"request_Authorization": "REDACTED", "request_User-Agent": "curl/8", "downstream_Content-Type": "text/plain",
		"RequestCount": 1.0, "level": "info",
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s: got %v, want %v", k, m[k], v)
		}
	}
	for _, k := range []string{"ClientPort", "request_X-Token"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s present, want dropped", k)
		}
	}
	if strings.Contains(out, "hunter2") || strings.Contains(out, "t0ps3cret") || strings.Contains(out, "YWxpY2U6c2VjcmV0") {
		t.Errorf("secret leaked: %s", out)
	}
}

func TestAccessLogHeadersDroppedByDefault(t *testing.T) {
	out := runLog(t, &static.AccessLog{Format: "json"}, event("web@file", 200, 0))
	if strings.Contains(out, "request_") || strings.Contains(out, "downstream_") {
		t.Errorf("headers logged without headers.defaultMode keep: %s", out)
	}
}

func TestAccessLogFilters(t *testing.T) {
	slow := event("slow", 200, 2*time.Second)
	retried := event("retried", 200, time.Millisecond)
	retried.Retries = 1
	failed := event("failed", 503, time.Millisecond)
	ok := event("ok", 200, time.Millisecond)
	tests := []struct {
		name string
		f    *static.AccessLogFilters
		want []string
	}{
		{"none", nil, []string{"slow", "retried", "failed", "ok"}},
		{"status range", &static.AccessLogFilters{StatusCodes: []string{"500-599"}}, []string{"failed"}},
		{"retries", &static.AccessLogFilters{RetryAttempts: true}, []string{"retried"}},
		{"min duration", &static.AccessLogFilters{MinDuration: config.Duration(time.Second)}, []string{"slow"}},
		{"any matches", &static.AccessLogFilters{StatusCodes: []string{"503"}, MinDuration: config.Duration(time.Second)}, []string{"slow", "failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := runLog(t, &static.AccessLog{Filters: tt.f}, slow, retried, failed, ok)
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				for _, r := range []string{"slow", "retried", "failed", "ok"} {
					if strings.Contains(line, `"`+r+`"`) {
						got = append(got, r)
					}
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAccessLogBadConfig(t *testing.T) {
	tests := []struct {
		name string
		c    *static.AccessLog
		want string
	}{
		{"format", &static.AccessLog{Format: "xml"}, `accessLog.format: "xml"`},
		{"status", &static.AccessLog{Filters: &static.AccessLogFilters{StatusCodes: []string{"200", "5x0"}}}, `accessLog.filters.statusCodes[1]: "5x0"`},
		{"range", &static.AccessLog{Filters: &static.AccessLogFilters{StatusCodes: []string{"599-500"}}}, `statusCodes[0]`},
		{"mode", &static.AccessLog{Fields: &static.AccessLogFields{Headers: &static.FieldHeaders{Names: map[string]string{"X": "hide"}}}}, `accessLog.fields.headers.names.X: "hide"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewAccessLog(io.Discard, tt.c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// blockingWriter blocks every write until released.
type blockingWriter struct{ release chan struct{} }

func (b blockingWriter) Write(p []byte) (int, error) { <-b.release; return len(p), nil }

func TestAccessLogNeverBlocks(t *testing.T) {
	w := blockingWriter{release: make(chan struct{})}
	a, err := NewAccessLog(w, &static.AccessLog{BufferingSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	for range 10 { // the writer is stuck: these must return at once
		a.Request(event("web@file", 200, 0))
	}
	if a.Dropped() < 6 { // at most 2 lines in the stuck write and 2 waiting
		t.Errorf("dropped %d, want at least 6 of 10 with a 2-line buffer and a stuck writer", a.Dropped())
	}
	cancel()
	close(w.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestLiveRates(t *testing.T) {
	l := NewLive()
	prev := l.Snapshot(t0)
	for range 98 {
		l.Request(event("web@file", 200, 2*time.Millisecond))
	}
	l.Request(event("web@file", 500, 900*time.Millisecond))
	l.Request(event("web@file", 502, 900*time.Millisecond))
	l.Request(event("", 404, time.Millisecond)) // no router: not counted
	cur := l.Snapshot(t0.Add(2 * time.Second))
	r := Rates(prev, cur)["web@file"]
	if r.RequestsPerSecond != 50 || r.ErrorsPerSecond != 1 || r.ErrorRatio != 0.02 {
		t.Errorf("got %+v, want 50 rps, 1 err/s, ratio 0.02", r)
	}
	if r.P50Ms < 2 || r.P50Ms > 2.5 {
		t.Errorf("p50 %.3fms, want within 25%% above 2ms", r.P50Ms)
	}
	if r.P99Ms < 900 || r.P99Ms > 1125 {
		t.Errorf("p99 %.3fms, want within 25%% above 900ms", r.P99Ms)
	}
	if len(cur.Routers) != 1 {
		t.Errorf("routers %v, want only web@file", cur.Routers)
	}
	// Next interval: no traffic → zero rates, router still listed.
	idle := Rates(cur, l.Snapshot(t0.Add(3*time.Second)))["web@file"]
	if idle != (Rate{}) {
		t.Errorf("idle interval: got %+v, want zero", idle)
	}
	l.Forget(func(string, string) bool { return false })
	if n := len(l.Snapshot(t0).Routers); n != 0 {
		t.Errorf("after Forget: %d routers", n)
	}
}

// TestLiveServers: each attempt counts on the server tried, with the
// status that server gave (a retried 502 then 200 is one failure on the
// first server and one success on the second) and its own duration;
// Forget drops servers like routers.
func TestLiveServers(t *testing.T) {
	l := NewLive()
	prev := l.Snapshot(t0)
	for range 9 {
		ev := event("web@file", 200, 5*time.Millisecond)
		ev.Attempts = []Attempt{{Upstream: "http://a:80", Status: 502, Duration: time.Millisecond}, {Upstream: "http://b:80", Status: 200, Duration: 400 * time.Millisecond}}
		l.Request(ev)
	}
	ev := event("web@file", 200, time.Millisecond)
	ev.Attempts = []Attempt{{Upstream: "http://a:80", Status: 200, Duration: time.Millisecond}}
	l.Request(ev)
	cur := l.Snapshot(t0.Add(time.Second))
	rates := RatesOf(time.Second, prev.Servers, cur.Servers)
	a, b := rates["http://a:80"], rates["http://b:80"]
	if a.RequestsPerSecond != 10 || a.ErrorsPerSecond != 9 || a.ErrorRatio != 0.9 {
		t.Errorf("server a: %+v, want 10 attempts/s, 9 of them 5xx", a)
	}
	if b.RequestsPerSecond != 9 || b.ErrorsPerSecond != 0 || b.P50Ms < 400 || b.P50Ms > 500 {
		t.Errorf("server b: %+v, want 9 attempts/s, no 5xx, p50 about 400 ms", b)
	}
	if r := Rates(prev, cur)["web@file"]; r.ErrorsPerSecond != 0 || r.RequestsPerSecond != 10 {
		t.Errorf("router: %+v, want 10 requests/s answered 200", r)
	}
	l.Forget(func(kind, name string) bool { return kind != "server" || name == "http://b:80" })
	if s := l.Snapshot(t0).Servers; len(s) != 1 || s["http://b:80"].Requests != 9 {
		t.Errorf("after forgetting server a: %v", s)
	}
}

func TestTee(t *testing.T) {
	if Tee(nil, nil) != nil {
		t.Error("Tee of nothing is not nil")
	}
	a, b := NewLive(), NewLive()
	o := Tee(a, nil, b)
	o.Request(event("x", 200, 0))
	o.Conn("web", "http", 1)
	for _, l := range []*Live{a, b} {
		if l.Snapshot(t0).Routers["x"].Requests != 1 {
			t.Error("event not delivered to every observer")
		}
	}
}

func BenchmarkLiveRequest(b *testing.B) {
	l := NewLive()
	ev := event("web@file", 200, 3*time.Millisecond)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Request(ev)
		}
	})
}

func BenchmarkMetricsRequest(b *testing.B) {
	m := NewMetrics(MetricsOptions{Prometheus: &static.Prometheus{AddRoutersLabels: true}})
	ev := event("web@file", 200, 3*time.Millisecond)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Request(ev)
		}
	})
}

func BenchmarkAccessLogCommon(b *testing.B) {
	a, err := NewAccessLog(io.Discard, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	ev := event("web@file", 200, 3*time.Millisecond)
	b.ReportAllocs()
	for b.Loop() {
		a.Request(ev)
	}
	cancel()
	<-done
}

// TestRequestPathDoesNotAllocate: once labels have been seen, Metrics and
// Live record a request without allocating.
func TestRequestPathDoesNotAllocate(t *testing.T) {
	m := NewMetrics(MetricsOptions{Prometheus: &static.Prometheus{AddRoutersLabels: true}})
	l := NewLive()
	ev := event("web@file", 200, 3*time.Millisecond)
	m.Request(ev)
	l.Request(ev)
	if n := testing.AllocsPerRun(200, func() { m.Request(ev) }); n != 0 {
		t.Errorf("Metrics.Request: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(200, func() { l.Request(ev) }); n != 0 {
		t.Errorf("Live.Request: %v allocs, want 0", n)
	}
	tried := event("web@file", 200, 3*time.Millisecond)
	tried.Attempts = []Attempt{{Upstream: "http://10.0.0.1:80", Status: 502}, {Upstream: "http://10.0.0.2:80", Status: 200}}
	l.Request(tried)
	if n := testing.AllocsPerRun(200, func() { l.Request(tried) }); n != 0 {
		t.Errorf("Live.Request with two attempts: %v allocs, want 0", n)
	}
	sec := event("web@file", 200, 3*time.Millisecond)
	sec.TLSVersion, sec.TLSCipher = tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256
	sec.Retries = 1
	m.Request(sec)
	if n := testing.AllocsPerRun(200, func() { m.Request(sec) }); n != 0 {
		t.Errorf("Metrics.Request with TLS and a retry: %v allocs, want 0", n)
	}
}

// TestLiveTotalsServicesAndClientErrors: the proxy total counts routed and
// unrouted requests but not internal ones; services are counted on their
// own; 4xx and 5xx are separate.
func TestLiveTotalsServicesAndClientErrors(t *testing.T) {
	l := NewLive()
	prev := l.Snapshot(t0)
	l.Request(event("web@file", 200, time.Millisecond))
	l.Request(event("web@file", 404, time.Millisecond))
	l.Request(event("web@file", 503, time.Millisecond))
	unrouted := event("", 404, time.Millisecond)
	unrouted.Service = ""
	l.Request(unrouted)
	internal := event("api@internal", 200, time.Millisecond)
	internal.Service = "api@internal"
	l.Request(internal)
	cur := l.Snapshot(t0.Add(2 * time.Second))
	tot := RateOf(2*time.Second, prev.Total, cur.Total)
	if tot.RequestsPerSecond != 2 || tot.ClientErrorsPerSecond != 1 || tot.ErrorsPerSecond != 0.5 {
		t.Errorf("total %+v, want 2 rps, 1 4xx/s, 0.5 5xx/s (internal request left out)", tot)
	}
	svc := RatesOf(2*time.Second, prev.Services, cur.Services)
	if svc["api@file"].RequestsPerSecond != 1.5 || svc["api@internal"].RequestsPerSecond != 0.5 {
		t.Errorf("services %+v", svc)
	}
	l.Forget(func(kind, name string) bool { return kind == "service" && name == "api@file" })
	s := l.Snapshot(t0)
	if len(s.Routers) != 0 || len(s.Services) != 1 {
		t.Errorf("after Forget: routers %v services %v", s.Routers, s.Services)
	}
}

// TestMetricsTLSGRPCAndInternals: HTTPS requests feed *_requests_tls_total
// with Traefik's version and cipher names; a gRPC answer is counted by its
// Grpc-Status (2, Unknown, when it has none); requests to internal
// services are left out unless AddInternals.
func TestMetricsTLSGRPCAndInternals(t *testing.T) {
	for _, internals := range []bool{false, true} {
		m := NewMetrics(MetricsOptions{Prometheus: &static.Prometheus{AddRoutersLabels: true}, AddInternals: internals})
		sec := event("web@file", 200, time.Millisecond)
		sec.TLS, sec.TLSVersion, sec.TLSCipher = true, tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256
		m.Request(sec)
		g := event("web@file", 200, time.Millisecond)
		g.Header = http.Header{"Content-Type": {"application/grpc"}}
		g.ResponseHeader = http.Header{"Trailer:Grpc-Status": {"5"}}
		m.Request(g)
		g2 := event("web@file", 200, time.Millisecond)
		g2.Header = http.Header{"Content-Type": {"application/grpc"}}
		g2.ResponseHeader = http.Header{}
		m.Request(g2)
		scrapeEv := event("prometheus@internal", 200, time.Millisecond)
		scrapeEv.Service = "prometheus@internal"
		scrapeEv.EntryPoint = "traefik"
		m.Request(scrapeEv)
		out := scrape(t, m.Handler())
		for _, want := range []string{
			`traefik_entrypoint_requests_tls_total{entrypoint="web",tls_cipher="TLS_AES_128_GCM_SHA256",tls_version="1.3"} 1`,
			`traefik_router_requests_tls_total{router="web@file",service="api@file",tls_cipher="TLS_AES_128_GCM_SHA256",tls_version="1.3"} 1`,
			`traefik_service_requests_tls_total{service="api@file",tls_cipher="TLS_AES_128_GCM_SHA256",tls_version="1.3"} 1`,
			`traefik_service_requests_total{code="5",method="GET",protocol="grpc",service="api@file"} 1`,
			`traefik_service_requests_total{code="2",method="GET",protocol="grpc",service="api@file"} 1`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("scrape lacks %s", want)
			}
		}
		if got := strings.Contains(out, `entrypoint="traefik"`); got != internals {
			t.Errorf("AddInternals=%v: internal request counted: %v", internals, got)
		}
	}
	if TLSVersionLabel(0x0999) != "unknown" || TLSCipherLabel(0x0999) != "unknown" {
		t.Error("unknown TLS version or cipher not labelled unknown")
	}
}

// TestFileReopenLosesNoLine: lines written while the file is renamed and
// reopened (logrotate's create mode, then SIGUSR1) all land in one of the
// two files, none twice.
func TestFileReopenLosesNoLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAccessLog(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	const n = 2000
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			ev := event("web@file", 200, time.Millisecond)
			ev.Path = fmt.Sprintf("/line-%d", i)
			a.Request(ev)
			if i%100 == 0 {
				time.Sleep(time.Millisecond) // let the writer keep up: a full queue drops, by design
			}
		}
	})
	for i := range 5 {
		time.Sleep(3 * time.Millisecond)
		if err := os.Rename(path, fmt.Sprintf("%s.%d", path, i)); err != nil {
			t.Fatal(err)
		}
		if err := f.Reopen(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	files, _ := filepath.Glob(path + "*")
	if len(files) != 6 {
		t.Errorf("%d files, want 6 (5 rotated and the current)", len(files))
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			_, rest, _ := strings.Cut(line, `"GET `)
			p, _, _ := strings.Cut(rest, " ")
			seen[p]++
		}
	}
	if a.Dropped() != 0 {
		t.Fatalf("%d lines dropped by a full queue: the test must not overload the writer", a.Dropped())
	}
	for i := range n {
		if c := seen[fmt.Sprintf("/line-%d", i)]; c != 1 {
			t.Fatalf("line %d written %d times, want once", i, c)
		}
	}
}

// TestMetricsKeepDropsRemovedObjects: series of a router and a service that
// left the configuration are no longer exported; the others stay, and a
// request to a kept router still counts.
func TestMetricsKeepDropsRemovedObjects(t *testing.T) {
	m := NewMetrics(MetricsOptions{Prometheus: &static.Prometheus{AddRoutersLabels: true}})
	gone := event("old@file", 200, time.Millisecond)
	gone.Service = "old-svc@file"
	gone.Retries = 1
	m.Request(gone)
	m.Request(event("web@file", 200, time.Millisecond))
	m.Keep(func(n string) bool { return n == "web@file" }, func(n string) bool { return n == "api@file" })
	m.Request(event("web@file", 200, time.Millisecond))
	out := scrape(t, m.Handler())
	if strings.Contains(out, "old@file") || strings.Contains(out, "old-svc@file") {
		t.Errorf("series of removed objects still exported:\n%s", out)
	}
	for _, want := range []string{
		`traefik_router_requests_total{code="200",method="GET",protocol="http",router="web@file",service="api@file"} 2`,
		`traefik_service_requests_total{code="200",method="GET",protocol="http",service="api@file"} 2`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	m.Request(gone) // the object comes back: counted afresh
	if out := scrape(t, m.Handler()); !strings.Contains(out, `router="old@file",service="old-svc@file"} 1`) {
		t.Errorf("a returning router is not counted again:\n%s", out)
	}
}
