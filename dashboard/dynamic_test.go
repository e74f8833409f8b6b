package dashboard

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/gantry-proxy/gantry/config"

	"github.com/gantry-proxy/gantry/config/static"
)

// /api/entrypoints lists the dynamic entrypoints open next to the static
// ones, marked "dynamic": true, each with the providers asking for it and
// where (requestedBy); a static name is never shadowed.
func TestDynamicEntryPointsListed(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.DynamicEntryPoints = func() map[string]*static.EntryPoint {
			return map[string]*static.EntryPoint{"shop": {Address: ":8001"}, "web": {Address: ":9999"}}
		}
	})
	m := f.m2
	c := *m.Config
	c.EntryPoints = map[string]*config.DynamicEntryPoint{"shop@docker": {Address: ":8001"}, "shopping@docker": {Address: ":8002"}}
	m = merged(t, &c)
	m.Origins = map[string]string{"entrypoint shop@docker": "container shop label gantry.entrypoints.shop.address"}
	f.tables.swap(m)
	h := f.api.Handler()
	rec := do(t, h, http.MethodGet, "/api/entrypoints", nil)
	type request struct{ Provider, Source string }
	var items []struct {
		Name        string    `json:"name"`
		Address     string    `json:"address"`
		Dynamic     bool      `json:"dynamic"`
		RequestedBy []request `json:"requestedBy"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &items); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	got := map[string]string{}
	for _, it := range items {
		got[it.Name] = it.Address
		if it.Dynamic != (it.Name == "shop") {
			t.Errorf("%s: dynamic=%v", it.Name, it.Dynamic)
		}
		want := []request(nil)
		if it.Name == "shop" {
			want = []request{{"docker", "container shop label gantry.entrypoints.shop.address"}}
		}
		if !reflect.DeepEqual(it.RequestedBy, want) {
			t.Errorf("%s: requestedBy %+v, want %+v", it.Name, it.RequestedBy, want)
		}
	}
	if got["shop"] != ":8001" || got["web"] == ":9999" {
		t.Errorf("entrypoints: %v", got)
	}
	if rec := do(t, h, http.MethodGet, "/api/entrypoints/shop", nil); rec.Code != 200 || !json.Valid(rec.Body.Bytes()) {
		t.Errorf("/api/entrypoints/shop: %d %s", rec.Code, rec.Body)
	}
}
