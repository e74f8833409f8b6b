package dashboard_test

import (
	"log/slog"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dashboard"
	"github.com/gantry-proxy/gantry/dataplane"
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
		pool   = dataplane.NewPool(log, dataplane.PoolOptions{})
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
	_ = internal // dataplane.GenerationOptions.Internal
	// Output:
}
