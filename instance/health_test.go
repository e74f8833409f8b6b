package instance

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// checkedBackend is a server counting the health checks it receives.
type checkedBackend struct {
	*httptest.Server
	checks atomic.Int64
}

func newCheckedBackend(t *testing.T) *checkedBackend {
	t.Helper()
	b := &checkedBackend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			b.checks.Add(1)
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(b.Close)
	return b
}

// waitChecks waits until b has received at least n health checks.
func waitChecks(t *testing.T, what string, b *checkedBackend, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for b.checks.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d health checks after 30s, want %d", what, b.checks.Load(), n)
		}
		time.Sleep(5 * time.Millisecond) // poll interval
	}
}

// checkedRoutes returns a configuration routing one host to each backend,
// every service health-checked on /health every 20ms.
func checkedRoutes(version string, backends map[string]*checkedBackend) *providers.Merged {
	cfg := config.New()
	for name, b := range backends {
		cfg.HTTP.Routers[name+"@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`" + name + ".test`)", Service: name + "@file"}}
		cfg.HTTP.Services[name+"@file"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{
			Servers:     []config.Server{{URL: b.URL}},
			HealthCheck: &config.ServerHealthCheck{Path: "/health", Interval: config.Duration(20 * time.Millisecond), Timeout: config.Duration(time.Second)},
		}}
	}
	return &providers.Merged{Version: version, Config: cfg}
}

// Apply retires the previous generation: a health-checked server the new
// configuration no longer names is not checked any more, while the server
// it keeps goes on being checked (its checker carries over the swap). The
// count is taken on the backends: once the kept server has had 2 checks
// after the swap (a check of the removed one in flight at the swap has
// arrived by then), the removed one gets none during 5 more of the kept
// one's. Leaving the old generation open keeps checking the removed server
// at the kept one's pace.
func TestApplyStopsCheckingRemovedServers(t *testing.T) {
	removed, kept := newCheckedBackend(t), newCheckedBackend(t)
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}}}
	inst := New(c, Options{Log: slog.New(slog.DiscardHandler)})
	ctx := t.Context()
	if err := inst.Start(ctx, Wiring{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := inst.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()

	inst.Apply(ctx, checkedRoutes("v1", map[string]*checkedBackend{"removed": removed, "kept": kept}))
	waitChecks(t, "removed server before the swap", removed, 2)
	waitChecks(t, "kept server before the swap", kept, 2)

	inst.Apply(ctx, checkedRoutes("v2", map[string]*checkedBackend{"kept": kept}))
	atSwap := removed.checks.Load()
	waitChecks(t, "kept server after the swap", kept, kept.checks.Load()+2)
	settled := removed.checks.Load()
	if settled > atSwap+1 {
		t.Errorf("removed server: %d checks after the swap, want at most the 1 in flight", settled-atSwap)
	}
	waitChecks(t, "kept server, 5 more checks", kept, kept.checks.Load()+5)
	if n := removed.checks.Load() - settled; n != 0 {
		t.Errorf("removed server checked %d more times while the kept one was checked 5 times, want 0 (the old generation was not retired)", n)
	}
}

// Shutdown returns once every component has returned, after the
// entrypoints drained: a component sees its context end only then, and
// nothing is left running (goleak, TestMain).
func TestShutdownJoinsComponents(t *testing.T) {
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}}}
	inst := New(c, Options{})
	started, returned := make(chan struct{}), atomic.Bool{}
	comp := Component{Name: "test", Run: func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		returned.Store(true)
		return nil
	}}
	if err := inst.Start(t.Context(), Wiring{Components: []Component{comp}}); err != nil {
		t.Fatal(err)
	}
	<-started
	if inst.Addrs("web") == nil {
		t.Fatal("entrypoint web not bound after Start")
	}
	if err := inst.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !returned.Load() {
		t.Error("Shutdown returned before the component did")
	}
	if err := inst.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}
