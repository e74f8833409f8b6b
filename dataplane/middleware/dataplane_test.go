package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// buildGeneration builds a dataplane Generation (the real proxy) over a merged
// YAML configuration whose names are already qualified.
func buildGeneration(t *testing.T, yml string) *generation.Generation {
	t.Helper()
	c, err := config.Decode([]byte(yml), config.YAML)
	if err != nil {
		t.Fatal(err)
	}
	pool := generation.NewPool(slog.New(slog.DiscardHandler), generation.PoolOptions{})
	t.Cleanup(pool.Close)
	g := generation.New(pool, &providers.Merged{Config: c}, generation.Options{})
	t.Cleanup(g.Close)
	return g
}

func routerServer(t *testing.T, g *generation.Generation, c *config.Configuration, name string) (*httptest.Server, error) {
	t.Helper()
	h, err := g.Build(context.Background(), name, c.HTTP.Routers[name])
	if err != nil {
		return nil, err
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s, nil
}

type seenReq struct {
	URI    string
	Prefix string
}

// Cases 011 and 023 through the dataplane's own proxy: cross-provider
// middleware names, list order, a missing middleware disabling only its
// router, and StripPrefix's table.
func TestThroughDataplaneCases011And023(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(seenReq{r.RequestURI, r.Header.Get("X-Forwarded-Prefix")})
	}))
	t.Cleanup(backend.Close)
	yml := `
http:
  middlewares:
    headers-std@file:   {headers: {customResponseHeaders: {X-Std: "1"}}}
    strip@docker:       {stripPrefix: {prefixes: ["/x"]}}
    local-chain@docker: {chain: {middlewares: ["strip@docker"]}}
    strip-app@file:     {stripPrefix: {prefixes: ["/app"]}}
  services:
    app@docker: {loadBalancer: {servers: [{url: "` + backend.URL + `"}]}}
  routers:
    app@docker:    {rule: "Host(` + "`app.example.com`" + `)", service: app@docker, middlewares: ["headers-std@file", "local-chain@docker"]}
    broken@docker: {rule: "Host(` + "`b.example.com`" + `)", service: app@docker, middlewares: ["headers-std@file", "auth@file", "local-chain@docker"]}
    strip@file:    {rule: "PathPrefix(` + "`/app`" + `)", service: app@docker, middlewares: ["strip-app@file"]}
`
	c, _ := config.Decode([]byte(yml), config.YAML)
	g := buildGeneration(t, yml)

	app, err := routerServer(t, g, c, "app@docker")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(app.URL + "/x/y")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var s seenReq
	_ = json.Unmarshal(body, &s)
	if s.URI != "/y" || resp.Header.Get("X-Std") != "1" {
		t.Errorf("app: backend saw %q, X-Std %q", s.URI, resp.Header.Get("X-Std"))
	}

	_, err = routerServer(t, g, c, "broken@docker")
	var oe *router.ObjectError
	if !errors.As(err, &oe) || oe.Kind != "middleware" || oe.Name != "auth@file" || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("broken router: %v, want an ObjectError for middleware auth@file", err)
	}

	strip, err := routerServer(t, g, c, "strip@file")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]seenReq{
		"/app":         {"/", "/app"},
		"/app/":        {"/", "/app"},
		"/app/x/y?q=1": {"/x/y?q=1", "/app"},
		"/application": {"/lication", "/app"},
	} {
		resp, err := http.Get(strip.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got seenReq
		_ = json.Unmarshal(body, &got)
		if resp.StatusCode != 200 || got != want {
			t.Errorf("%s: %d %+v, want %+v", path, resp.StatusCode, got, want)
		}
	}
}

// Case 027 end to end: the dataplane keeps X-Forwarded-Proto from a
// trusted load balancer and drops it from other peers, and redirectScheme
// acts on what is left. The "lb" entrypoint trusts 127.0.0.1 (the test
// client plays the load balancer), "direct" trusts nobody (request 6 of
// the case: an untrusted peer sending X-Forwarded-Proto: https).
func TestThroughDataplaneCase027(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "backend")
	}))
	t.Cleanup(backend.Close)
	yml := `
http:
  middlewares:
    to-https@file: {redirectScheme: {scheme: https, permanent: true}}
  services:
    app@file: {loadBalancer: {servers: [{url: "` + backend.URL + `"}]}}
  routers:
    app@file: {rule: "Host(` + "`app.example.com`" + `)", service: app@file, middlewares: [to-https@file], entryPoints: [lb, direct]}
`
	c, err := config.Decode([]byte(yml), config.YAML)
	if err != nil {
		t.Fatal(err)
	}
	m := &providers.Merged{Config: c}
	g := buildGeneration(t, yml)
	tbl := router.Compile(context.Background(), m, g, router.Options{EntryPoints: []router.EntryPoint{{Name: "lb"}, {Name: "direct"}}})
	active := router.NewActive()
	active.Swap(tbl)
	srv, err := dataplane.NewServer(slog.New(slog.DiscardHandler), active, map[string]*static.EntryPoint{
		"lb":     {Address: "127.0.0.1:0", ForwardedHeaders: &static.ForwardedHeaders{TrustedIPs: []string{"127.0.0.1/32"}}},
		"direct": {Address: "127.0.0.1:0"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(noRedirect.CloseIdleConnections)
	tests := []struct {
		name, ep, method, xfp string
		code                  int
		loc                   string
	}{
		{"1 https from the LB", "lb", "GET", "https", 200, ""},
		{"2 http from the LB", "lb", "GET", "http", 301, "https://app.example.com/a?b=1"},
		{"3 POST http from the LB", "lb", "POST", "http", 308, "https://app.example.com/a?b=1"},
		{"6 https from an untrusted peer", "direct", "GET", "https", 301, "https://app.example.com/a?b=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, "http://"+srv.Addrs(tt.ep)[0].String()+"/a?b=1", nil)
			req.Host = "app.example.com"
			req.Header.Set("X-Forwarded-Proto", tt.xfp)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.code || resp.Header.Get("Location") != tt.loc {
				t.Errorf("%d %q, want %d %q", resp.StatusCode, resp.Header.Get("Location"), tt.code, tt.loc)
			}
		})
	}
}
