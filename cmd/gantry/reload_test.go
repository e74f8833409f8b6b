package main

import (
	"reflect"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
)

// plan refuses what only a restart applies, naming the field; compose keeps the running value of each refused section
// and the new value of everything else (log.level apart from log).
func TestPlanAndCompose(t *testing.T) {
	running := &static.Configuration{
		EntryPoints: map[string]*static.EntryPoint{
			"web": {Address: ":80"}, "dns": {Address: ":53/udp"}, "gone": {Address: ":81"},
		},
		Log:   &static.Log{Level: "INFO", Format: "common"},
		Store: &static.Store{Path: "a.db"},
		API:   &static.API{},
	}
	next := &static.Configuration{
		EntryPoints: map[string]*static.EntryPoint{
			"web": {Address: ":8080"}, "dns": {Address: ":5353/udp"}, "new": {Address: ":82"},
		},
		Log:   &static.Log{Level: "DEBUG", Format: "json"},
		Store: &static.Store{Path: "b.db"},
		API:   &static.API{Debug: true},
	}
	r := &reloader{cfg: running}
	apply, refused := r.plan(static.Diff(running, next), next)
	var ap, rp []string
	for _, c := range apply {
		ap = append(ap, c.Path)
	}
	for _, f := range refused {
		rp = append(rp, f.Path)
		if f.Reason == "" {
			t.Errorf("%s refused without a reason", f.Path)
		}
	}
	if want := []string{"api", "entryPoints.dns", "entryPoints.gone", "entryPoints.new", "entryPoints.web", "log.level"}; !reflect.DeepEqual(ap, want) {
		t.Errorf("applied %v, want %v", ap, want)
	}
	if want := []string{"log", "store"}; !reflect.DeepEqual(rp, want) {
		t.Errorf("refused %v, want %v", rp, want)
	}
	refused = append(refused, static.Refusal{Change: static.Change{Path: "entryPoints.dns", Kind: static.Changed}, Reason: "bind"})
	eff := compose(next, running, refused)
	if eff.EntryPoints["dns"].Address != ":53/udp" || eff.EntryPoints["web"].Address != ":8080" || eff.EntryPoints["new"] == nil || eff.EntryPoints["gone"] != nil {
		t.Errorf("entrypoints: %v", eff.EntryPoints)
	}
	if *eff.Log != (static.Log{Level: "DEBUG", Format: "common"}) {
		t.Errorf("log %+v, want the new level with the running format", *eff.Log)
	}
	if eff.Store.Path != "a.db" || !eff.API.Debug {
		t.Errorf("store %+v api %+v", eff.Store, eff.API)
	}
	if next.EntryPoints["dns"].Address != ":5353/udp" {
		t.Error("compose changed its input")
	}
}

// compose keeps the running value of each whole section refused (every
// restartOnly section but log, which keeps its level apart, and api) and
// the new value of every other section.
func TestComposeKeepsEachRefusedSection(t *testing.T) {
	running := &static.Configuration{
		AccessLog: &static.AccessLog{}, Metrics: &static.Metrics{}, Tracing: &static.Tracing{},
		Store: &static.Store{Path: "a.db"}, Cluster: &static.Cluster{}, ServersTransport: &static.ServersTransport{},
		API: &static.API{}, Ping: &static.Ping{},
	}
	next := &static.Configuration{Ping: &static.Ping{EntryPoint: "next"}}
	sections := map[string]func(c *static.Configuration) any{
		"accessLog":        func(c *static.Configuration) any { return c.AccessLog },
		"metrics":          func(c *static.Configuration) any { return c.Metrics },
		"tracing":          func(c *static.Configuration) any { return c.Tracing },
		"store":            func(c *static.Configuration) any { return c.Store },
		"cluster":          func(c *static.Configuration) any { return c.Cluster },
		"serversTransport": func(c *static.Configuration) any { return c.ServersTransport },
		"api":              func(c *static.Configuration) any { return c.API },
	}
	for s := range restartOnly {
		if _, ok := sections[s]; !ok && s != "log" {
			t.Errorf("restartOnly section %s is not checked here", s)
		}
	}
	for s, get := range sections {
		eff := compose(next, running, []static.Refusal{{Change: static.Change{Path: s, Kind: static.Removed}, Reason: "restart"}})
		if got := get(eff); got != get(running) {
			t.Errorf("%s refused: %v, want the running %v", s, got, get(running))
		}
		for o, other := range sections {
			if o != s && other(eff) != other(next) {
				t.Errorf("%s refused: %s is %v, want the new %v", s, o, other(eff), other(next))
			}
		}
		if eff.Ping != next.Ping {
			t.Errorf("%s refused: ping %v, want the new %v", s, eff.Ping, next.Ping)
		}
	}
}
