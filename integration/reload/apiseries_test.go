package reload

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// series is /api/series as the tests read it (dashboard.Series).
type series struct {
	T   []int64   `json:"t"`
	RPS []float32 `json:"rps"`
}

// nonZero returns the samples of s with traffic, by time.
func (s series) nonZero() map[int64]float32 {
	out := map[int64]float32{}
	for i, r := range s.RPS {
		if r > 0 {
			out[s.T[i]] = r
		}
	}
	return out
}

// getSeries reads /api/series?router=NAME at api, failing on a non-200.
func getSeries(api, router string) (series, error) {
	var s series
	resp, err := http.Get("http://" + api + "/api/series?router=" + router)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("/api/series: status %d", resp.StatusCode)
	}
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// seriesStatic is a static configuration with web and traefik entrypoints,
// the file provider on dyn, and extra appended (an api section…).
func seriesStatic(web, api, dyn, db, extra string) string {
	return fmt.Sprintf(`entryPoints:
  web:
    address: %q
  traefik:
    address: %q
providers:
  providersThrottleDuration: 20ms
  file:
    directory: %q
store:
  path: %q
`, web, api, dyn, db) + extra
}

// trafficSeen sends n requests to app.test on url and waits until the
// router's chart at api has samples with traffic; it returns them.
func trafficSeen(t *testing.T, url, api string, n int) map[int64]float32 {
	t.Helper()
	for range n {
		harness.TryGet(t, pollTimeout, url, harness.Host("app.test"), harness.StatusIs(200))
	}
	var seen map[int64]float32
	harness.Try(t, pollTimeout, func() error {
		s, err := getSeries(api, "app@file")
		if err != nil {
			return err
		}
		if seen = s.nonZero(); len(seen) == 0 {
			return fmt.Errorf("no sample with traffic yet in %d samples", len(s.T))
		}
		return nil
	})
	return seen
}

// TestStaticReloadKeepsChartHistory: the dashboard's per-second chart
// history (the sampler's ring) survives a live static reload that
// rebuilds the API (api.debug turned on; the file's change, which runs
// the same reload as SIGHUP): every sample with
// traffic taken before the reload is still in /api/series after it.
func TestStaticReloadKeepsChartHistory(t *testing.T) {
	w := harness.StartWhoamiProc(t, "w1")
	work := t.TempDir()
	dyn := filepath.Join(work, "dyn")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w.URL(), "app"))
	web, api := harness.FreeAddr(t), harness.FreeAddr(t)
	db := filepath.Join(work, "gantry.db")
	apiSection := func(debug bool) string { return fmt.Sprintf("api:\n  insecure: true\n  debug: %v\n", debug) }
	g := harness.StartWith(t, harness.Options{Static: seriesStatic(web, api, dyn, db, apiSection(false)), Dir: work})
	url := g.URL(t, "web", "/")
	before := trafficSeen(t, url, api, 20)

	reloadStatic(t, g, seriesStatic(web, api, dyn, db, apiSection(true)), "static configuration reloaded", 1)
	harness.TryGet(t, pollTimeout, "http://"+api+"/debug/vars", harness.StatusIs(200)) // the rebuilt API serves
	s, err := getSeries(api, "app@file")
	if err != nil {
		t.Fatal(err)
	}
	after := s.nonZero()
	for at, rps := range before {
		if after[at] != rps {
			t.Errorf("sample at %d: %v req/s before the reload, %v after (history lost: %d samples with traffic left of %d)",
				at, rps, after[at], len(after), len(before))
		}
	}
}

// TestStaticReloadAddedAPIHasLiveRates: an api section added by a live
// static reload (none at start) gets live per-router rates at once: the
// router's chart shows the traffic sent after the reload, no restart.
func TestStaticReloadAddedAPIHasLiveRates(t *testing.T) {
	w := harness.StartWhoamiProc(t, "w1")
	work := t.TempDir()
	dyn := filepath.Join(work, "dyn")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w.URL(), "app"))
	web, api := harness.FreeAddr(t), harness.FreeAddr(t)
	db := filepath.Join(work, "gantry.db")
	g := harness.StartWith(t, harness.Options{Static: seriesStatic(web, api, dyn, db, ""), Dir: work})
	url := g.URL(t, "web", "/")
	harness.TryGet(t, pollTimeout, url, harness.Host("app.test"), harness.StatusIs(200))
	harness.TryGet(t, pollTimeout, "http://"+api+"/api/overview", harness.StatusIs(404))

	reloadStatic(t, g, seriesStatic(web, api, dyn, db, "api:\n  insecure: true\n"), "static configuration reloaded", 1)
	harness.TryGet(t, pollTimeout, "http://"+api+"/api/overview", harness.StatusIs(200))
	trafficSeen(t, url, api, 20)
}
