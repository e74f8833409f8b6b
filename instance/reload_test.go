package instance

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// A live static reload through the instance: OpenEntryPoints binds an
// added entrypoint, ReloadStatic swaps in routes on it (its router, with
// no entryPoints of its own, answers there at once); the next reload
// removing it closes its listener once the table no longer routes it, and
// a bind that fails is returned by path while the rest applies.
func TestStaticReloadOpensThenRemovesEntryPoints(t *testing.T) {
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "app") }))
	defer be.Close()
	ctx := t.Context()
	web := &static.EntryPoint{Address: "127.0.0.1:0"}
	c1 := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": web}}
	inst := New(c1, Options{Log: slog.New(slog.DiscardHandler)})
	if err := inst.Start(ctx, Wiring{}); err != nil {
		t.Fatal(err)
	}
	defer inst.Shutdown(context.Background())
	cfg := config.New()
	cfg.HTTP.Routers["app@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "PathPrefix(`/`)", Service: "app@file"}}
	cfg.HTTP.Services["app@file"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{Servers: []config.Server{{URL: be.URL}}}}
	inst.Apply(ctx, &providers.Merged{Version: "v1", Config: cfg})

	admin := "127.0.0.1:" + strconv.Itoa(freePort(t))
	busy := httptest.NewServer(http.NotFoundHandler()) // holds its port: binding it fails
	defer busy.Close()
	c2 := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{
		"web": web, "admin": {Address: admin}, "taken": {Address: busy.Listener.Addr().String()},
	}}
	failed := inst.OpenEntryPoints(ctx, static.Diff(c1, c2), c1, c2)
	if len(failed) != 1 || failed["entryPoints.taken"] == nil {
		t.Errorf("failed binds %v, want entryPoints.taken only", failed)
	}
	delete(c2.EntryPoints, "taken") // refused: the running value (none) is kept
	inst.ReloadStatic(ctx, c2, nil)
	if code, body := get(t, admin); code != 200 || body != "app" {
		t.Errorf("GET on the added entrypoint: %d %q, want 200 app", code, body)
	}

	c3 := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": web}}
	if failed := inst.OpenEntryPoints(ctx, static.Diff(c2, c3), c2, c3); len(failed) != 0 {
		t.Fatalf("removing: %v", failed)
	}
	if refused(admin) {
		t.Error("the removed entrypoint stopped accepting before the routes left it")
	}
	inst.ReloadStatic(ctx, c3, nil)
	if !refused(admin) {
		t.Error("the removed entrypoint still accepts after ReloadStatic")
	}
	if st := inst.Active().Load().Report().Routers["app@file"]; st == nil || len(st.Using) != 1 || st.Using[0] != "web" {
		t.Errorf("app@file after the removal: %+v, want on web only", st)
	}
}
