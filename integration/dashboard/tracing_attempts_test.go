package dashboard

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestTracingUnroutedAndAttempts: a request no router matches gets an
// EntryPoint span (404, in the caller's trace) and nothing else, as
// Traefik's entrypoint tracing covers every request; a request the retry
// middleware tries twice on a refused server gets two ReverseProxy spans,
// both children of its Router span, each an error with status 502 naming
// the server; a request answered at once gets exactly one, whose context
// the backend receives.
func TestTracingUnroutedAndAttempts(t *testing.T) {
	rc := &receiver{}
	collector := httptest.NewServer(rc)
	t.Cleanup(collector.Close)
	be := &tracedBackend{parent: map[string]string{}}
	backend := httptest.NewServer(be)
	t.Cleanup(backend.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	harness.WriteFile(t, dir, "dynamic.yml", fmt.Sprintf(`http:
  middlewares:
    twice:
      retry:
        attempts: 2
  routers:
    ok:
      entryPoints: [web]
      rule: Host(`+"`ok.example`"+`)
      service: ok
    retried:
      entryPoints: [web]
      rule: Host(`+"`retried.example`"+`)
      middlewares: [twice]
      service: dead
  services:
    ok:
      loadBalancer:
        servers:
          - url: "%s"
    dead:
      loadBalancer:
        servers:
          - url: "http://%s"
`, backend.URL, dead))
	g := harness.Start(t, fmt.Sprintf(`entryPoints:
  web:
    address: "%s"
  traefik:
    address: "%s"
api:
  insecure: true
tracing:
  otlp:
    http:
      endpoint: "%s/v1/traces"
providers:
  providersThrottleDuration: 50ms
  file:
    directory: "%s"
`, harness.FreeAddr(t), harness.FreeAddr(t), collector.URL, dir), "OTEL_BSP_SCHEDULE_DELAY=200")
	admin := g.URL(t, "traefik", "")
	harness.TryGet(t, 60*time.Second, admin+"/api/http/routers", harness.StatusIs(200), harness.BodyContains(`"name":"retried@file"`))

	const unroutedTrace, retriedTrace, okTrace = "11111111111111111111111111111111", "22222222222222222222222222222222", "33333333333333333333333333333333"
	const callerSpan = "00f067aa0ba902b7"
	call := func(host, path, traceID string) int {
		req, _ := http.NewRequest("GET", g.URL(t, "web", path), nil)
		req.Host = host
		req.Header.Set("Traceparent", "00-"+traceID+"-"+callerSpan+"-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := call("nobody.example", "/nowhere", unroutedTrace); c != 404 {
		t.Fatalf("unrouted: %d", c)
	}
	if c := call("retried.example", "/r", retriedTrace); c != 502 {
		t.Fatalf("retried: %d, want 502 (both attempts refused)", c)
	}
	if c := call("ok.example", "/ok", okTrace); c != 200 {
		t.Fatalf("ok: %d", c)
	}
	harness.Try(t, 60*time.Second, func() error {
		if len(rc.trace(unroutedTrace)) < 1 || len(rc.trace(retriedTrace)) < 4 || len(rc.trace(okTrace)) < 3 {
			return fmt.Errorf("spans so far: unrouted %d, retried %d, ok %d", len(rc.trace(unroutedTrace)), len(rc.trace(retriedTrace)), len(rc.trace(okTrace)))
		}
		return nil
	})
	time.Sleep(500 * time.Millisecond) // one more export period: nothing else may arrive

	un := rc.trace(unroutedTrace)
	if len(un) != 1 || un[0].name != "EntryPoint" || un[0].kind != tracepb.Span_SPAN_KIND_SERVER || un[0].parentID != callerSpan {
		t.Fatalf("unrouted request spans %+v, want one EntryPoint server span child of the caller's", un)
	}
	for k, v := range map[string]string{"http.response.status_code": "404", "entry_point": "web", "url.path": "/nowhere", "server.address": "nobody.example"} {
		if un[0].attrs[k] != v {
			t.Errorf("unrouted EntryPoint %s = %q, want %q", k, un[0].attrs[k], v)
		}
	}

	byName := func(spans []span, name string) []span {
		var out []span
		for _, s := range spans {
			if s.name == name {
				out = append(out, s)
			}
		}
		return out
	}
	re := rc.trace(retriedTrace)
	routers, rps := byName(re, "Router"), byName(re, "ReverseProxy")
	if len(routers) != 1 || len(rps) != 2 {
		t.Fatalf("retried request: %d Router and %d ReverseProxy spans, want 1 and 2 (one per attempt)", len(routers), len(rps))
	}
	for i, rp := range rps {
		if rp.parentID != routers[0].spanID || rp.kind != tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("attempt %d: parent %s kind %v, want the Router span %s, client", i, rp.parentID, rp.kind, routers[0].spanID)
		}
		if rp.status != tracepb.Status_STATUS_CODE_ERROR || rp.attrs["http.response.status_code"] != "502" ||
			rp.attrs["url.full"] != "http://"+dead+"/r" {
			t.Errorf("attempt %d: status %v, code %q, url.full %q; want an error, 502, the refused server", i, rp.status, rp.attrs["http.response.status_code"], rp.attrs["url.full"])
		}
	}
	if rps[0].spanID == rps[1].spanID {
		t.Error("both attempts share one span")
	}
	if ep := byName(re, "EntryPoint"); len(ep) != 1 || ep[0].attrs["http.response.status_code"] != "502" || ep[0].status != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("retried EntryPoint: %+v", ep)
	}

	okSpans := rc.trace(okTrace)
	okRP := byName(okSpans, "ReverseProxy")
	if len(okRP) != 1 {
		t.Fatalf("ok request: %d ReverseProxy spans, want 1", len(okRP))
	}
	if tp := be.got("/ok"); !strings.HasPrefix(tp, "00-"+okTrace+"-"+okRP[0].spanID) {
		t.Errorf("backend got traceparent %q, want the ReverseProxy span %s", tp, okRP[0].spanID)
	}
}
