package dashboard

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// A routing problem (found by router.Compile, not by the provider) names
// where its object is defined when the provider said so.
func TestRoutingProblemNamesOrigin(t *testing.T) {
	c := config.New()
	c.HTTP.Routers["web@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`a`, `b`)", Service: "s@file"}}
	m := &providers.Merged{Version: "v1", Config: c, Origins: map[string]string{"router web@file": "/etc/gantry/app.yml:4:5"}}
	active := router.NewActive()
	active.Swap(router.Compile(context.Background(), m, tlsErrBuilder{}, compileOpts))
	a, err := New(Options{Tables: RouterTables(active)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rec := do(t, a.Handler(), "GET", "/api/problems", nil)
	var got []providers.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if strings.HasPrefix(p.Source, "/etc/gantry/app.yml:4:5") && strings.Contains(p.Message, "expected 1 argument") {
			return
		}
	}
	t.Fatalf("no problem locating router web@file in %s", rec.Body.String())
}
