package generation_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// A broken reference disables only the routers that use it, with an error
// naming the object once; the other routers keep serving.
func TestBrokenObjectsDisableOnlyTheirRouters(t *testing.T) {
	be := dptest.EchoBackend(t, "ok")
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	tbl := h.Apply(fmt.Sprintf(`
http:
  routers:
    good@file: {rule: "Host(`+"`good`"+`)", service: s@file}
    nosvc@file: {rule: "Host(`+"`nosvc`"+`)", service: missing@file}
    badmw@file: {rule: "Host(`+"`badmw`"+`)", service: s@file, middlewares: [bad@file]}
    loop@file: {rule: "Host(`+"`loop`"+`)", service: loop@file}
    strat@file: {rule: "Host(`+"`strat`"+`)", service: strat@file}
    internal@file: {rule: "Host(`+"`internal`"+`)", service: api@internal}
    chained@file: {rule: "Host(`+"`chained`"+`)", service: s@file, middlewares: [chain@file]}
    svcmw@file: {rule: "Host(`+"`svcmw`"+`)", service: svcmw@file}
  services:
    s@file: {loadBalancer: {servers: [{url: %[1]q}]}}
    loop@file: {weighted: {services: [{name: loop2@file}]}}
    loop2@file: {weighted: {services: [{name: loop@file}]}}
    strat@file: {loadBalancer: {strategy: random, servers: [{url: %[1]q}]}}
    svcmw@file: {middlewares: [bad@file], loadBalancer: {servers: [{url: %[1]q}]}}
  middlewares:
    bad@file: {stripPrefixRegex: {regex: ["(["]}}
    chain@file: {chain: {middlewares: [bad@file]}}
`, be.URL), generation.Options{})
	rep := tbl.Report()
	tests := []struct{ router, want string }{
		{"nosvc@file", `"missing@file" does not exist`},
		{"badmw@file", "middleware bad@file: "},
		{"loop@file", "reference cycle"},
		{"strat@file", `"random" is not one of wrr, p2c, hrw, leasttime`},
		{"svcmw@file", "middleware bad@file: "},
		{"internal@file", "service api@internal: internal service is not enabled"},
		{"chained@file", "middleware chain@file: "},
	}
	for _, tt := range tests {
		st := rep.Routers[tt.router]
		if st == nil || st.Status != "disabled" || !strings.Contains(strings.Join(st.Errors, "; "), tt.want) {
			t.Errorf("router %s: %+v, want disabled with an error containing %q", tt.router, st, tt.want)
		}
	}
	if errs := strings.Join(rep.Routers["badmw@file"].Errors, "; "); strings.Count(errs, "bad@file") != 1 {
		t.Errorf("middleware named %d times in %q, want once", strings.Count(errs, "bad@file"), errs)
	}
	for _, mw := range []string{"chain@file", "bad@file"} {
		if st := rep.Middlewares[mw]; st == nil || len(st.Errors) == 0 {
			t.Errorf("middleware %s: %+v, want it marked in error", mw, st)
		}
	}
	if code, _ := h.Get("web", "good", "/"); code != 200 {
		t.Errorf("good router: %d, want 200", code)
	}
	if code, _ := h.Get("web", "nosvc", "/"); code != 404 {
		t.Errorf("disabled router: %d, want 404", code)
	}
}

// Weighted, failover, mirroring, internal and service-level middlewares,
// entrypoint middlewares on their entrypoint only, and panic recovery.
func TestServiceKinds(t *testing.T) {
	a, b := dptest.EchoBackend(t, "a"), dptest.EchoBackend(t, "b")
	var mirrored atomic.Int64
	var mirrorBody atomic.Value
	mirrorBE := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mirrorBody.Store(string(body))
		mirrored.Add(1)
	}))
	h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}, "admin": {Address: "127.0.0.1:0"}}, nil)
	defer dptest.CloseIdle()
	internal := map[string]http.Handler{
		"api@internal":   http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "Name: api\n") }),
		"panic@internal": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") }),
	}
	tbl := h.Apply(fmt.Sprintf(`
http:
  routers:
    w@file: {rule: "Host(`+"`w`"+`)", service: w@file}
    f@file: {rule: "Host(`+"`f`"+`)", service: f@file}
    m@file: {rule: "Host(`+"`m`"+`)", service: m@file}
    api@file: {rule: "Host(`+"`api`"+`)", service: api@internal}
    panic@file: {rule: "Host(`+"`panic`"+`)", service: panic@internal}
    mw@file: {rule: "Host(`+"`mw`"+`)", service: withmw@file}
  services:
    a@file: {loadBalancer: {servers: [{url: %q}]}}
    b@file: {loadBalancer: {servers: [{url: %q}]}}
    none@file: {loadBalancer: {servers: [], healthCheck: {path: /health}}}
    mirror@file: {loadBalancer: {servers: [{url: %q}]}}
    w@file: {weighted: {services: [{name: a@file, weight: 2}, {name: b@file, weight: 1}, {name: none@file, weight: 5}]}}
    f@file: {failover: {service: none@file, fallback: b@file}}
    m@file: {mirroring: {service: a@file, mirrors: [{name: mirror@file, percent: 50}]}}
    withmw@file: {middlewares: [tag@file], loadBalancer: {servers: [{url: %q}]}}
  middlewares:
    tag@file: {headers: {customRequestHeaders: {X-Tag: svc}}}
    ep@file: {headers: {customRequestHeaders: {X-Ep: admin}}}
`, a.URL, b.URL, mirrorBE.URL, a.URL), generation.Options{
		Internal:              internal,
		EntryPointMiddlewares: map[string][]string{"admin": {"ep@file"}},
	})
	for name, st := range tbl.Report().Routers {
		if st.Status != "enabled" {
			t.Errorf("router %s: %+v", name, st)
		}
	}
	counts := map[string]int{}
	for range 9 {
		_, body := h.Get("web", "w", "/")
		counts[dptest.EchoHeader(body, "Name")]++
	}
	if counts["a"] != 6 || counts["b"] != 3 {
		t.Errorf("weighted 2:1 with an empty child: got %v, want a:6 b:3", counts)
	}
	if _, body := h.Get("web", "f", "/"); dptest.EchoHeader(body, "Name") != "b" {
		t.Errorf("failover with main down: got %q, want fallback b", dptest.FirstLines(body, 1))
	}
	for i := range 10 {
		req, _ := http.NewRequest(http.MethodPost, "http://"+h.Addr("web")+"/", strings.NewReader(fmt.Sprint("payload ", i)))
		req.Host = "m"
		resp, err := dptest.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if dptest.EchoHeader(string(body), "Name") != "a" {
			t.Fatalf("mirroring: main answered %q", dptest.FirstLines(string(body), 1))
		}
	}
	dptest.Eventually(t, "5 of 10 requests mirrored", func() bool { return mirrored.Load() == 5 })
	if got, _ := mirrorBody.Load().(string); !strings.HasPrefix(got, "payload ") {
		t.Errorf("mirror got body %q, want a copy of the request body", got)
	}
	if _, body := h.Get("web", "api", "/"); dptest.EchoHeader(body, "Name") != "api" {
		t.Errorf("internal service: %q", body)
	}
	if code, _ := h.Get("web", "panic", "/"); code != 500 {
		t.Errorf("panicking handler: %d, want 500", code)
	}
	if _, body := h.Get("web", "mw", "/"); dptest.EchoHeader(body, "X-Tag") != "svc" || dptest.EchoHeader(body, "X-Ep") != "" {
		t.Errorf("service middleware on web: X-Tag %q X-Ep %q, want svc and none", dptest.EchoHeader(body, "X-Tag"), dptest.EchoHeader(body, "X-Ep"))
	}
	if _, body := h.Get("admin", "mw", "/"); dptest.EchoHeader(body, "X-Ep") != "admin" {
		t.Errorf("entrypoint middleware on admin: X-Ep %q, want admin", dptest.EchoHeader(body, "X-Ep"))
	}
}

// Closing the last generation using a backend forgets it and stops its
// checker (goleak checks the goroutine at exit). The same service in a new
// generation keeps its running checker (its last check is still known
// right after the swap, before a new checker could have run one) and its
// transport (the next request reuses the upstream keep-alive connection).
func TestGenerationCloseReleases(t *testing.T) {
	var peers sync.Map // upstream connections seen by the backend, by remote address
	var n atomic.Int32
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			peers.Store(n.Add(1), r.RemoteAddr)
		}
	}))
	defer be.Close()
	h := newHarness(t, nil, nil)
	cfg := `
http:
  routers: {%s@file: {rule: "PathPrefix(` + "`/`" + `)", service: s@file}}
  services: {s@file: {loadBalancer: {healthCheck: {path: /health, interval: 300ms}, servers: [{url: %q}]}}}
`
	h.Apply(fmt.Sprintf(cfg, "r", be.URL), generation.Options{})
	if st := h.Pool.Status(); len(st) != 1 {
		t.Fatalf("status %v; want one backend", st)
	}
	dptest.Eventually(t, "the first active check", func() bool { return !h.Pool.Status()[0].LastCheck.IsZero() })
	if code, _ := h.Get("web", "x", "/"); code != 200 {
		t.Fatalf("status %d", code)
	}
	h.Apply(fmt.Sprintf(cfg, "renamed", be.URL), generation.Options{})
	if st := h.Pool.Status(); len(st) != 1 || st[0].LastCheck.IsZero() {
		t.Errorf("after a swap: status %+v; want the running checker kept (its last check known)", st)
	}
	if code, _ := h.Get("web", "x", "/"); code != 200 {
		t.Fatalf("status %d", code)
	}
	first, _ := peers.Load(int32(1))
	second, _ := peers.Load(int32(2))
	if first == nil || first != second {
		t.Errorf("upstream connections %v then %v; want the transport's keep-alive connection kept across the swap", first, second)
	}
	h.Apply(`http: {}`, generation.Options{})
	if st := h.Pool.Status(); len(st) != 0 {
		t.Errorf("after the swap: status %v; want none", st)
	}
}
