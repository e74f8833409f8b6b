package dashboard

import (
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/web"
)

func TestServesUI(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.UI = web.FS() })
	h := f.api.Handler()
	rec := do(t, h, "GET", "/dashboard/", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "<title>Gantry dashboard</title>") {
		t.Fatalf("GET /dashboard/: %d %.100s", rec.Code, rec.Body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q, want default-src 'self'", csp)
	}
	js := do(t, h, "GET", "/dashboard/app.js", nil)
	if js.Code != 200 || !strings.Contains(js.Header().Get("Content-Type"), "javascript") {
		t.Errorf("app.js: %d %q", js.Code, js.Header().Get("Content-Type"))
	}
	for _, p := range []string{"/", "/dashboard"} {
		if rec := do(t, h, "GET", p, nil); rec.Code != 302 || rec.Header().Get("Location") == "" {
			t.Errorf("GET %s: %d %q, want a redirect to the dashboard", p, rec.Code, rec.Header().Get("Location"))
		}
	}
}

func TestBasePath(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.UI = web.FS(); o.Static.API = &static.API{BasePath: "/gantry/"} })
	h := f.api.Handler()
	if rec := do(t, h, "GET", "/gantry/api/version", nil); rec.Code != 200 {
		t.Errorf("under basePath: %d", rec.Code)
	}
	if rec := do(t, h, "GET", "/gantry/dashboard/", nil); rec.Code != 200 {
		t.Errorf("UI under basePath: %d", rec.Code)
	}
	if rec := do(t, h, "GET", "/api/version", nil); rec.Code != 404 {
		t.Errorf("outside basePath: %d, want 404", rec.Code)
	}
}
