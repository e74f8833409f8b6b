package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/store"
)

// apply swaps in a new table, saves only when asked, and logs each problem
// once: when it appears, and "problem resolved" when it goes away.
func TestApplyLogsProblemsOnce(t *testing.T) {
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	pool := dataplane.NewPool(log, dataplane.PoolOptions{})
	defer pool.Close()
	saved := 0
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": {Address: ":80"}}}
	a := &applier{log: log, pool: pool, active: router.NewActive(), store: saverFunc(func() { saved++ }), ropts: routerOptions(c)}
	defer a.close()

	bad := func(version string) *providers.Merged {
		cfg := config.New()
		cfg.HTTP.Routers["r@file"] = &config.Router{Rule: "Host(`a`, `b`)", Service: "s@file"}
		return &providers.Merged{Version: version, Config: cfg, Problems: []providers.Problem{
			{Provider: "file", Source: "/x.yml:3", Message: "bad thing", Severity: providers.SeverityError},
		}}
	}
	t1 := a.apply(context.Background(), bad("v1"), true)
	if a.active.Load() != t1 || t1.Report().Count(router.StatusDisabled) != 1 {
		t.Fatalf("table not swapped in or router not disabled")
	}
	a.apply(context.Background(), bad("v2"), false)
	if saved != 1 {
		t.Errorf("saved %d times, want 1 (save=false the second time)", saved)
	}
	if n := strings.Count(logs.String(), "bad thing"); n != 1 {
		t.Errorf("configuration problem logged %d times, want 1:\n%s", n, logs.String())
	}
	// Two routing problems (the rule, the missing service), each logged once.
	if n := strings.Count(logs.String(), `msg="routing problem"`); n != 2 {
		t.Errorf("routing problems logged %d times, want 2:\n%s", n, logs.String())
	}
	a.apply(context.Background(), &providers.Merged{Version: "v3", Config: config.New()}, true)
	if n := strings.Count(logs.String(), `msg="problem resolved"`); n != 3 {
		t.Errorf("resolved lines: %d, want 3:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), `msg="config applied"`); n != 3 {
		t.Errorf("config applied lines: %d, want 3", n)
	}
}

type saverFunc func()

func (f saverFunc) SaveApplied(context.Context, *providers.Merged, time.Time, *store.Counts) error {
	f()
	return nil
}

// The configuration is saved before its table is swapped in: whoever wakes
// on the old table's Replaced channel (the dashboard's WebSocket, whose
// page then re-reads /api/revisions) finds the new version stored.
func TestApplySavesBeforeTheSwap(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	pool := dataplane.NewPool(log, dataplane.PoolOptions{})
	defer pool.Close()
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": {Address: ":80"}}}
	active := router.NewActive()
	var atSave []string // the live table's version at each save
	a := &applier{log: log, pool: pool, active: active, ropts: routerOptions(c), store: saverFunc(func() {
		v := "none"
		if t := active.Load(); t != nil {
			v = t.Version()
		}
		atSave = append(atSave, v)
	})}
	defer a.close()
	a.apply(context.Background(), &providers.Merged{Version: "v1", Config: config.New()}, true)
	a.apply(context.Background(), &providers.Merged{Version: "v2", Config: config.New()}, true)
	if len(atSave) != 2 || atSave[0] == "v1" || atSave[1] != "v1" {
		t.Errorf("live table at each save %q: want each version saved while the previous table still serves", atSave)
	}
}
