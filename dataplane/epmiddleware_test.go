package dataplane

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// Case 060: an entrypoint's unqualified middleware names are qualified
// with each router's provider, as names written on the router; they run
// before the router's own. A name missing for one provider fails closed
// on that entrypoint for that provider's routers only (503, never the
// router without it) and is one problem (the middleware, with the
// routers it wraps), not an error on every router.
func TestEntryPointMiddlewaresQualifiedPerProvider(t *testing.T) {
	be := dptest.EchoBackend(t, "be")
	h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}, "other": {Address: "127.0.0.1:0"}}, nil)
	tbl := h.Apply(fmt.Sprintf(`
http:
  routers:
    r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file, middlewares: [rtprefix@file]}
    dup@file: {rule: "PathPrefix(`+"`/dup`"+`)", service: s@file, middlewares: [epprefix@file]}
    d@docker: {rule: "Host(`+"`d.example.com`"+`)", service: s@file}
  services:
    s@file: {loadBalancer: {servers: [{url: %q}]}}
  middlewares:
    epprefix@file: {addPrefix: {prefix: /ep}}
    rtprefix@file: {addPrefix: {prefix: /rt}}
    hdr@file: {headers: {customRequestHeaders: {X-Ep: "yes"}}}
`, be.URL), generation.Options{EntryPointMiddlewares: map[string][]string{"web": {"epprefix@file", "hdr"}}})
	code, body := h.Get("web", "x.example.com", "/x")
	if code != 200 || reqLine(body) != "GET /rt/ep/x HTTP/1.1" || dptest.EchoHeader(body, "X-Ep") != "yes" {
		t.Errorf("file router r on web: %d %q X-Ep %q, want /rt/ep/x with X-Ep yes", code, reqLine(body), dptest.EchoHeader(body, "X-Ep"))
	}
	if _, body := h.Get("web", "x.example.com", "/dup/y"); reqLine(body) != "GET /ep/ep/dup/y HTTP/1.1" {
		t.Errorf("dup on web: %q, want /ep/ep/dup/y", reqLine(body))
	}
	if code, _ := h.Get("web", "d.example.com", "/"); code != 503 {
		t.Errorf("docker router on web (hdr@docker missing): %d, want 503", code)
	}
	if code, body := h.Get("other", "d.example.com", "/"); code != 200 || reqLine(body) != "GET / HTTP/1.1" {
		t.Errorf("docker router on other: %d %q, want 200 unchanged", code, reqLine(body))
	}
	rep := tbl.Report()
	for name, st := range rep.Routers {
		if st.Status != "enabled" {
			t.Errorf("router %s: %s %q, want enabled (the problem is the middleware's)", name, st.Status, st.Errors)
		}
	}
	mw := rep.Middlewares["hdr@docker"]
	if mw == nil || mw.Status != "disabled" || strings.Join(mw.UsedBy, ",") != "d@docker" || !strings.Contains(strings.Join(mw.Errors, " "), "entryPoints.web.http.middlewares") {
		t.Errorf("middleware hdr@docker: %+v, want disabled, used by d@docker, naming entryPoints.web.http.middlewares", mw)
	}
	if p := rep.Problems(); len(p) != 1 {
		t.Errorf("problems %q, want one", p)
	}
}

// reqLine is the request line an echoBackend body reports.
func reqLine(body string) string {
	lines := strings.Split(body, "\n")
	if len(lines) < 2 {
		return ""
	}
	return lines[1]
}
