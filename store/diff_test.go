package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/store"
)

func TestDiff(t *testing.T) {
	a, b := config.New(), config.New()
	a.HTTP.Routers["same@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Path(`/`)", Service: "s@file"}}
	b.HTTP.Routers["same@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Path(`/`)", Service: "s@file", Middlewares: []string{}}}
	a.HTTP.Routers["gone@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Path(`/g`)", Service: "s@file"}}
	b.HTTP.Routers["new@docker"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Path(`/n`)", Service: "s@file"}}
	a.HTTP.Routers["edit@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Path(`/e`)", Service: "s@file"}}
	b.HTTP.Routers["edit@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Path(`/e`)", Service: "s@file", Priority: 9}}
	a.HTTP.Services["s@file"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{Servers: []config.Server{{URL: "http://a"}}}}
	b.HTTP.Services["s@file"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{Servers: []config.Server{{URL: "http://b"}}}}
	b.HTTP.Middlewares["m@file"] = &config.Middleware{AddPrefix: &config.AddPrefix{Prefix: "/p"}}

	want := store.Changes{
		Routers:     store.ObjectChanges{Added: []string{"new@docker"}, Removed: []string{"gone@file"}, Changed: []string{"edit@file"}},
		Services:    store.ObjectChanges{Changed: []string{"s@file"}},
		Middlewares: store.ObjectChanges{Added: []string{"m@file"}},
	}
	if d := cmp.Diff(want, store.Diff(a, b)); d != "" {
		t.Errorf("Diff (-want +got):\n%s", d)
	}
	if !store.Diff(a, a).Empty() {
		t.Errorf("Diff(a, a) not empty")
	}
	if got := store.Diff(nil, b); len(got.Routers.Added) != 3 {
		t.Errorf("Diff(nil, b) routers added %v, want 3", got.Routers.Added)
	}
}
