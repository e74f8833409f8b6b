package builtin

import (
	"context"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/google/go-cmp/cmp"
)

func TestBuild(t *testing.T) {
	tests := []struct {
		name   string
		static *static.Configuration
		want   map[string]*config.Router
	}{
		{"nil", nil, map[string]*config.Router{}},
		{"nothing enabled", &static.Configuration{API: &static.API{}}, map[string]*config.Router{}},
		{"api insecure", &static.Configuration{API: &static.API{Insecure: true}}, map[string]*config.Router{
			"api": {RouterCommon: config.RouterCommon{EntryPoints: []string{"traefik"}, Rule: "PathPrefix(`/api`) || PathPrefix(`/dashboard`)", Service: "api@internal", Priority: config.MaxPriority}},
		}},
		{"api insecure with debug", &static.Configuration{API: &static.API{Insecure: true, Debug: true}}, map[string]*config.Router{
			"api": {RouterCommon: config.RouterCommon{EntryPoints: []string{"traefik"}, Rule: "PathPrefix(`/api`) || PathPrefix(`/dashboard`) || PathPrefix(`/debug`)", Service: "api@internal", Priority: config.MaxPriority}},
		}},
		{"api insecure under a base path", &static.Configuration{API: &static.API{Insecure: true, Debug: true, BasePath: "/gantry/"}}, map[string]*config.Router{
			"api": {RouterCommon: config.RouterCommon{EntryPoints: []string{"traefik"}, Rule: "PathPrefix(`/gantry/api`) || PathPrefix(`/gantry/dashboard`) || PathPrefix(`/gantry/debug`)", Service: "api@internal", Priority: config.MaxPriority}},
		}},
		{"prometheus and ping on their entrypoints", &static.Configuration{
			Metrics: &static.Metrics{Prometheus: &static.Prometheus{EntryPoint: "metrics"}},
			Ping:    &static.Ping{},
		}, map[string]*config.Router{
			"prometheus": {RouterCommon: config.RouterCommon{EntryPoints: []string{"metrics"}, Rule: "PathPrefix(`/metrics`)", Service: "prometheus@internal", Priority: config.MaxPriority - 1}},
			"ping":       {RouterCommon: config.RouterCommon{EntryPoints: []string{"traefik"}, Rule: "PathPrefix(`/ping`)", Service: "ping@internal", Priority: config.MaxPriority - 2}},
		}},
		{"prometheus manual routing", &static.Configuration{
			Metrics: &static.Metrics{Prometheus: &static.Prometheus{ManualRouting: true}},
		}, map[string]*config.Router{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build(tt.static)
			if diff := cmp.Diff(tt.want, got.HTTP.Routers); diff != "" {
				t.Errorf("routers (-want +got):\n%s", diff)
			}
			if errs := config.Validate(got); len(errs) != 0 {
				t.Errorf("internal routers do not validate: %v", errs)
			}
		})
	}
}

func TestRunPublishesOnceAndMerges(t *testing.T) {
	p := New(&static.Configuration{API: &static.API{Insecure: true}})
	ctx, cancel := context.WithCancel(context.Background())
	var got []providers.Snapshot
	done := make(chan error)
	go func() {
		done <- p.Run(ctx, func(s providers.Snapshot) { got = append(got, s) })
	}()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v, want nil", err)
	}
	if len(got) != 1 {
		t.Fatalf("published %d snapshots, want 1", len(got))
	}
	m, err := providers.Merge(map[string]providers.Snapshot{Name: got[0]})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Config.HTTP.Routers["api@internal"]
	if r == nil || r.Service != "api@internal" {
		t.Errorf("merged routers: %v", m.Config.HTTP.Routers)
	}
}
