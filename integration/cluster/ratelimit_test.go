package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Two gantry processes share one rateLimit through a real redis-server:
// the requests admitted by both together stay within the one bucket
// (burst, plus the refill over the test's duration); alone, each would
// admit a whole burst. With Redis down, requests through the middleware
// get 500 (as in Traefik v3.4); when it is back, limiting resumes.
func TestRateLimitSharedThroughRedis(t *testing.T) {
	raddr := harness.FreeAddr(t)
	redisProc := startRedis(t, raddr)
	app := harness.StartWhoami(t, "app")
	const burst = 6
	dynamic := fmt.Sprintf(`
http:
  routers:
    app:
      rule: Host(`+"`app.test`"+`)
      service: app
      middlewares: [limit]
  services:
    app:
      loadBalancer:
        servers: [{url: "http://%s"}]
  middlewares:
    limit:
      rateLimit:
        average: 1
        period: 20s
        burst: %d
        redis:
          endpoints: [%q]
          dialTimeout: 500ms
          readTimeout: 500ms
          writeTimeout: 500ms
`, app, burst, raddr)
	var gs [2]*harness.Gantry
	for i := range gs {
		dyn := t.TempDir()
		harness.WriteFile(t, dyn, "dynamic.yml", dynamic)
		gs[i] = harness.Start(t, fmt.Sprintf("entryPoints:\n  web:\n    address: %q\n  traefik:\n    address: %q\napi:\n  insecure: true\n"+
			"providers:\n  file:\n    directory: %q\n", harness.FreeAddr(t), harness.FreeAddr(t), dyn))
		gs[i].WaitOutput(t, wait, "config applied")
	}
	start := time.Now()
	admitted, refused := 0, 0
	var per [2]int
	for i := range 40 {
		g := gs[i%2]
		r, err := harness.Get(g.URL(t, "web", "/"), harness.Host("app.test"))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		switch r.StatusCode {
		case http.StatusOK:
			admitted++
			per[i%2]++
		case http.StatusTooManyRequests:
			refused++
			if r.Header.Get("Retry-After") == "" {
				t.Fatalf("429 without Retry-After")
			}
		default:
			t.Fatalf("request %d: status %d %q", i, r.StatusCode, r.Body)
		}
	}
	elapsed := time.Since(start)
	limit := burst + int(elapsed/(20*time.Second))
	t.Logf("admitted %d (instance A %d, B %d), refused %d in %s; limit %d", admitted, per[0], per[1], refused, elapsed, limit)
	if admitted < burst || admitted > limit {
		t.Fatalf("admitted %d across both instances, want %d..%d (one shared bucket)", admitted, burst, limit)
	}
	if per[0] == 0 || per[1] == 0 {
		t.Fatalf("admissions %v: both instances should have admitted some", per)
	}

	// Redis down: 500 from both instances, no request admitted unlimited.
	redisProc.Stop(t)
	for _, g := range gs {
		harness.TryGet(t, wait, g.URL(t, "web", "/"), harness.Host("app.test"), harness.StatusIs(http.StatusInternalServerError))
	}
	// The outage is visible (issue 23): a problem naming the Redis, and
	// the Redis listed with state "down" beside the providers.
	backend := "redis " + raddr
	harness.TryGet(t, wait, gs[0].URL(t, "traefik", "/api/problems"), harness.BodyContains(`"source":"`+backend+`"`), harness.BodyContains("unreachable"))
	wantState(t, gs[0], backend, "down")
	// Back (empty: a fresh bucket): admitted again, and limited again.
	startRedis(t, raddr)
	harness.TryGet(t, wait, gs[0].URL(t, "web", "/"), harness.Host("app.test"), harness.StatusIs(http.StatusOK))
	harness.TryGet(t, wait, gs[1].URL(t, "web", "/"), harness.Host("app.test"), harness.StatusIs(http.StatusTooManyRequests))
	harness.TryGet(t, wait, gs[0].URL(t, "traefik", "/api/problems"), harness.BodyLacks(backend))
	wantState(t, gs[0], backend, "ok")
}

// wantState waits until /api/providers lists name with state.
func wantState(t *testing.T, g *harness.Gantry, name, state string) {
	t.Helper()
	harness.Try(t, wait, func() error {
		r, err := harness.Get(g.URL(t, "traefik", "/api/providers"))
		if err != nil {
			return err
		}
		var items []struct{ Name, State string }
		if err := json.Unmarshal([]byte(r.Body), &items); err != nil {
			return err
		}
		for _, it := range items {
			if it.Name == name && it.State == state {
				return nil
			}
		}
		return fmt.Errorf("/api/providers lists %+v, want %s %s", items, name, state)
	})
}
