package dataplane_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// Wiring the dataplane the way cmd/gantry does: one Pool for the process,
// one Generation per merged configuration (compiled by router.Compile and
// swapped into router.Active), one Server for the entrypoints.
func Example() {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from the backend, X-Forwarded-Proto=%s", r.Header.Get("X-Forwarded-Proto"))
	}))
	defer backend.Close()

	log := slog.New(slog.DiscardHandler)
	pool := generation.NewPool(log, generation.PoolOptions{})
	defer pool.Close()
	active := router.NewActive()
	eps := map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}}
	srv, err := dataplane.NewServer(log, active, eps, nil)
	if err != nil {
		panic(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())

	// One configuration change: build, compile, swap, release the old one.
	c, err := config.Decode([]byte(fmt.Sprintf(`
http:
  routers: {app@file: {rule: "Host(`+"`app.test`"+`)", service: app@file}}
  services: {app@file: {loadBalancer: {servers: [{url: %q}]}}}
`, backend.URL)), config.YAML)
	if err != nil {
		panic(err)
	}
	m := &providers.Merged{Version: "1", Config: c}
	gen := generation.New(pool, m, generation.Options{Log: log})
	defer gen.Close()
	active.Swap(router.Compile(context.Background(), m, gen, router.Options{EntryPoints: []router.EntryPoint{{Name: "web"}}}))

	req, _ := http.NewRequest(http.MethodGet, "http://"+srv.Addrs("web")[0].String()+"/", nil)
	req.Host = "app.test"
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 hello from the backend, X-Forwarded-Proto=http
}
