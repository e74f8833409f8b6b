package instance

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/entrypoints"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// orderCheck wraps the real Server and records, at each add and remove,
// whether the live table already routes the entrypoint.
type orderCheck struct {
	*dataplane.Server
	active *router.Active
	events []string
}

func (o *orderCheck) routed(name string) bool {
	t := o.active.Load()
	if t == nil {
		return false
	}
	for _, st := range t.Report().Routers {
		for _, ep := range st.Using {
			if ep == name {
				return true
			}
		}
	}
	return false
}

func (o *orderCheck) AddEntryPoint(ctx context.Context, name string, cfg *static.EntryPoint) error {
	o.events = append(o.events, fmt.Sprintf("add %s routed=%v", name, o.routed(name)))
	return o.Server.AddEntryPoint(ctx, name, cfg)
}

func (o *orderCheck) RemoveEntryPoint(name string, grace time.Duration) (<-chan struct{}, error) {
	o.events = append(o.events, fmt.Sprintf("remove %s routed=%v", name, o.routed(name)))
	return o.Server.RemoveEntryPoint(name, grace)
}

// Through Apply: a container's entrypoint is bound before the table
// routing it is swapped in, its router answers on it (and only on it, not
// being a default entrypoint), a request outside the allow-list is a
// problem of the served configuration and binds nothing, and once no
// provider asks for it the listener closes after the swap.
func TestApplyOpensDynamicEntryPointsFirst(t *testing.T) {
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "app") }))
	defer be.Close()
	log := slog.New(slog.DiscardHandler)
	port, outside := freePort(t), freePort(t)
	c := &static.Configuration{
		EntryPoints:        map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}},
		DynamicEntryPoints: &static.DynamicEntryPoints{Allowed: []string{"127.0.0.1:" + strconv.Itoa(port)}},
	}
	a := New(c, Options{Log: log})
	defer a.Shutdown(context.Background())
	active := a.Active()
	srv, err := dataplane.NewServer(log, active, c.EntryPoints, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	oc := &orderCheck{Server: srv, active: active}
	dyn, err := entrypoints.New(log, c, oc, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.serveDynamic(context.Background(), dyn)

	ask := func(version string, eps map[string]string) *providers.Merged {
		cfg := config.New()
		cfg.HTTP.Routers["app@docker"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "PathPrefix(`/`)", Service: "app@docker", EntryPoints: []string{"app"}}}
		cfg.HTTP.Routers["all@docker"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "PathPrefix(`/`)", Service: "app@docker"}}
		cfg.HTTP.Services["app@docker"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{Servers: []config.Server{{URL: be.URL}}}}
		cfg.EntryPoints = map[string]*config.DynamicEntryPoint{}
		for n, addr := range eps {
			cfg.EntryPoints[n] = &config.DynamicEntryPoint{Address: addr}
		}
		return &providers.Merged{Version: version, Config: cfg, Origins: map[string]string{
			"entrypoint evil@docker": "container evil label gantry.entrypoints.evil.address"}}
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	t1 := a.apply(context.Background(), ask("v1", map[string]string{"app@docker": addr, "evil@docker": "127.0.0.1:" + strconv.Itoa(outside)}), true)
	if st := t1.Report().Routers["app@docker"]; st == nil || st.Status != router.StatusEnabled {
		t.Fatalf("router on the dynamic entrypoint: %+v", st)
	}
	if got := t1.Report().Routers["all@docker"].Using; len(got) != 1 || got[0] != "web" {
		t.Errorf("a router without entryPoints uses %v, want only web (a dynamic entrypoint is no default)", got)
	}
	if code, body := get(t, addr); code != 200 || body != "app" {
		t.Errorf("GET through the dynamic entrypoint: %d %q", code, body)
	}
	var found bool
	for _, p := range active.Load().Merged().Problems {
		if p.Source == "container evil label gantry.entrypoints.evil.address" && strings.Contains(p.Message, "outside dynamicEntryPoints.allowed") {
			found = true
		}
	}
	if !found {
		t.Errorf("no problem for the request outside the allow-list in the served configuration: %v", active.Load().Merged().Problems)
	}
	if !refused("127.0.0.1:" + strconv.Itoa(outside)) {
		t.Error("the port outside the allow-list listens")
	}
	a.apply(context.Background(), ask("v2", nil), true)
	if !refused(addr) {
		t.Error("the dynamic entrypoint still listens once no provider asks for it")
	}
	want := []string{"add app routed=false", "remove app routed=false"}
	if strings.Join(oc.events, "; ") != strings.Join(want, "; ") {
		t.Errorf("events %q, want %q (bind before the routes, close after them)", oc.events, want)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return true
}

func get(t *testing.T, addr string) (int, string) {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("GET %s: %v", addr, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A live static reload narrowing dynamicEntryPoints.allowed (ReloadStatic)
// closes, after the swap, the dynamic entrypoint it no longer permits, and
// the served configuration says why.
func TestRestaticNarrowsDynamicEntryPoints(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	c := &static.Configuration{
		EntryPoints:        map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}},
		DynamicEntryPoints: &static.DynamicEntryPoints{Allowed: []string{addr}},
	}
	a := New(c, Options{Log: log})
	defer a.Shutdown(context.Background())
	active := a.Active()
	srv, err := dataplane.NewServer(log, active, c.EntryPoints, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	dyn, err := entrypoints.New(log, c, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.serveDynamic(context.Background(), dyn)
	cfg := config.New()
	cfg.EntryPoints = map[string]*config.DynamicEntryPoint{"app@file": {Address: addr}}
	a.apply(context.Background(), &providers.Merged{Version: "v1", Config: cfg}, false)
	if refused(addr) {
		t.Fatal("the dynamic entrypoint is not open")
	}
	narrowed := *c
	narrowed.DynamicEntryPoints = &static.DynamicEntryPoints{Allowed: []string{"127.0.0.1:1"}}
	a.ReloadStatic(context.Background(), &narrowed, nil)
	if !refused(addr) {
		t.Error("still listening after the allow-list no longer permits it")
	}
	var found bool
	for _, p := range active.Load().Merged().Problems {
		found = found || strings.Contains(p.Message, "entrypoint app: address \""+addr+"\" is outside dynamicEntryPoints.allowed (127.0.0.1:1)")
	}
	if !found {
		t.Errorf("no problem in the served configuration: %v", active.Load().Merged().Problems)
	}
}
