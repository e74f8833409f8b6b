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
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// generation builds a dataplane Generation (the real proxy) over a merged
// YAML configuration whose names are already qualified.
func generation(t *testing.T, yml string) *dataplane.Generation {
	t.Helper()
	c, err := config.Decode([]byte(yml), config.YAML)
	if err != nil {
		t.Fatal(err)
	}
	pool := dataplane.NewPool(slog.New(slog.DiscardHandler), dataplane.PoolOptions{Hostname: "gantry-test"})
	t.Cleanup(pool.Close)
	g := dataplane.NewGeneration(pool, &providers.Merged{Config: c}, dataplane.GenerationOptions{})
	t.Cleanup(g.Close)
	return g
}

func routerServer(t *testing.T, g *dataplane.Generation, c *config.Configuration, name string) (*httptest.Server, error) {
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
	g := generation(t, yml)

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
