package dashboard

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
)

// /api/entrypoints lists the dynamic entrypoints open next to the static
// ones, marked "dynamic": true; a static name is never shadowed.
func TestDynamicEntryPointsListed(t *testing.T) {
	f := newFixture(t, func(o *Options) {
		o.DynamicEntryPoints = func() map[string]*static.EntryPoint {
			return map[string]*static.EntryPoint{"shop": {Address: ":8001"}, "web": {Address: ":9999"}}
		}
	})
	h := f.api.Handler()
	rec := do(t, h, http.MethodGet, "/api/entrypoints", nil)
	var items []struct {
		Name    string `json:"name"`
		Address string `json:"address"`
		Dynamic bool   `json:"dynamic"`
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
	}
	if got["shop"] != ":8001" || got["web"] == ":9999" {
		t.Errorf("entrypoints: %v", got)
	}
	if rec := do(t, h, http.MethodGet, "/api/entrypoints/shop", nil); rec.Code != 200 || !json.Valid(rec.Body.Bytes()) {
		t.Errorf("/api/entrypoints/shop: %d %s", rec.Code, rec.Body)
	}
}
