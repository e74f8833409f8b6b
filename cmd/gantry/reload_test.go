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
