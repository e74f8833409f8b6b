package dashboard_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dashboard"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/store"
	"github.com/gantry-proxy/gantry/web"
)

// This is how cmd/gantry wires the API: after the pool, the store, the
// router.Active and the aggregator exist, and before the first apply. The
// Live observer joins the dataplane's observers so the WebSocket can push
// per-router rates.
func ExampleNew() {
	var (
		log    = slog.New(slog.DiscardHandler)
		c      = &static.Configuration{API: &static.API{Insecure: true}}
		active = router.NewActive()
		pool   = generation.NewPool(log, generation.PoolOptions{})
		agg    = providers.NewAggregator(log, 0)
		db     *store.DB // from store.Open
	)
	defer pool.Close()
	live := observe.NewLive()
	_ = observe.Tee(live /*, accessLog, metrics */) // the dataplane Observer
	opts := dashboard.Options{
		Log: log, Static: c, Tables: dashboard.RouterTables(active), Health: dashboard.PoolHealth(pool),
		Sources: agg, Live: live, UI: web.FS(), Version: "v1.0.0", StartDate: time.Now(),
	}
	if db != nil {
		opts.History = db
	}
	api, err := dashboard.New(opts)
	if err != nil {
		panic(err)
	}
	defer api.Close() // ends WebSocket loops at shutdown
	internal := map[string]any{"api@internal": api.Handler(), "dashboard@internal": api.Handler()}
	_ = internal // generation.Options.Internal

	// Before the first apply the API already answers: the version, and an
	// empty router list (no generation yet). A Host that is neither
	// loopback nor in api.allowedHosts is refused (DNS rebinding).
	for _, path := range []string{"/api/version", "/api/http/routers"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		req.Host = "127.0.0.1:8080"
		api.Handler().ServeHTTP(rec, req)
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			panic(err)
		}
		if m, ok := v.(map[string]any); ok {
			v = m["Version"]
		}
		fmt.Println(path, rec.Code, v)
	}
	// Output:
	// /api/version 200 v1.0.0
	// /api/http/routers 200 []
}
