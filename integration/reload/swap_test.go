package reload

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/instance"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// bigSnapshot returns a file-provider snapshot of n routers over n/10
// services and 10 middlewares; variant changes one router's rule so that
// successive variants are distinct versions.
func bigSnapshot(n, variant int) providers.Snapshot {
	c := config.New()
	for i := range 10 {
		c.HTTP.Middlewares[fmt.Sprintf("mw%d", i)] = &config.Middleware{AddPrefix: &config.AddPrefix{Prefix: fmt.Sprintf("/p%d", i)}}
	}
	svcs := max(n/10, 1)
	for i := range svcs {
		c.HTTP.Services[fmt.Sprintf("s%d", i)] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{
			Servers: []config.Server{{URL: fmt.Sprintf("http://127.0.0.%d:%d", 1+i%200, 10000+i)}},
		}}
	}
	for i := range n {
		c.HTTP.Routers[fmt.Sprintf("r%d", i)] = &config.Router{
			RouterCommon: config.RouterCommon{
				Rule:        fmt.Sprintf("Host(`h%d.example.com`) && PathPrefix(`/api`)", i),
				Service:     fmt.Sprintf("s%d", i%svcs),
				Middlewares: []string{fmt.Sprintf("mw%d", i%10)},
			},
		}
	}
	c.HTTP.Routers["r0"].Rule = fmt.Sprintf("Host(`v%d.example.com`)", variant)
	return providers.Snapshot{Config: c}
}

// newInstance returns the instance gantry runs, with entrypoint "web" and
// no store; it is not started (Apply needs no listener).
func newInstance(tb testing.TB) *instance.Instance {
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0", AsDefault: true}}}
	inst := instance.New(c, instance.Options{Log: slog.New(slog.DiscardHandler)})
	tb.Cleanup(func() { _ = inst.Shutdown(context.Background()) })
	return inst
}

// mergeCompileSwap is one full reload of a 10 000-router configuration.
func mergeCompileSwap(ctx context.Context, tb testing.TB, s *instance.Instance, snap providers.Snapshot) *router.Table {
	m, err := providers.Merge(map[string]providers.Snapshot{"file": snap})
	if err != nil {
		tb.Fatal(err)
	}
	return s.Apply(ctx, m)
}

// BenchmarkSwap measures merge + Instance.Apply (router.Compile with the
// real dataplane Generation, Active.Swap, the old generation retired,
// problems logged) of 10 000 routers, without saving. Run with -benchmem.
func BenchmarkSwap(b *testing.B) {
	snaps := []providers.Snapshot{bigSnapshot(10_000, 0), bigSnapshot(10_000, 1)}
	s := newInstance(b)
	ctx := b.Context()
	b.ReportAllocs()
	cpu0 := cpuTime()
	i := 0
	for b.Loop() {
		mergeCompileSwap(ctx, b, s, snaps[i%2])
		i++
	}
	// CPU time per swap (all threads, GC included) is steadier than wall
	// time on a shared machine.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMerge isolates the merge and hash of 10 000 routers.
func BenchmarkMerge(b *testing.B) {
	snap := map[string]providers.Snapshot{"file": bigSnapshot(10_000, 0)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := providers.Merge(snap); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSwapServesAndDoesNotGrow swaps a 10 000-router configuration 30
// times: every table routes, and the live heap after the last swap is not
// larger than after the fifth (old generations are released).
func TestSwapServesAndDoesNotGrow(t *testing.T) {
	if testing.Short() {
		t.Skip("10 000-router swaps")
	}
	snaps := []providers.Snapshot{bigSnapshot(10_000, 0), bigSnapshot(10_000, 1)}
	s := newInstance(t)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var base uint64
	for i := range 30 {
		tbl := mergeCompileSwap(t.Context(), t, s, snaps[i%2])
		if st := tbl.Report(); st == nil {
			t.Fatal("no report")
		}
		name, _ := s.Active().Load().Lookup("web", httptest.NewRequest(http.MethodGet, "http://h9999.example.com/api/x", nil))
		if name != "r9999@file" {
			t.Fatalf("swap %d: h9999.example.com/api routed to %q, want r9999@file", i, name)
		}
		if i == 4 {
			base = heap()
		}
	}
	end := heap()
	t.Logf("live heap after swap 5: %d KiB, after swap 30: %d KiB", base/1024, end/1024)
	if end > base+base/5 {
		t.Errorf("live heap grew from %d KiB to %d KiB over 25 swaps", base/1024, end/1024)
	}
}
