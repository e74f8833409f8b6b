package consul

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
	"github.com/gantry-proxy/gantry/providers/consul"
)

// latencyRuns is the number of registrations measured.
const latencyRuns = 20

// TestRegistrationLatency measures, through the real gantry binary, the time
// from a service registration returning to the first 200 for its host, over
// latencyRuns registrations, and logs p50 and p99 (issue 6's goal: p99
// under 1 s). It asserts only that every registration gets routed: timing
// is reported, never asserted.
func TestRegistrationLatency(t *testing.T) {
	a := startAgent(t)
	w1 := harness.StartWhoami(t, "w1")
	_, web := startGantry(t, a)
	url := "http://" + web + "/"
	harness.TryGet(t, e2eTimeout, url, harness.Host("lat-warmup.example.com"), harness.StatusIs(404))

	var took []time.Duration
	for i := range latencyRuns {
		host := fmt.Sprintf("lat-%d.example.com", i)
		id := fmt.Sprintf("lat-%d", i)
		registerWhoami(t, a, id, id, w1, "traefik.enable=true", "traefik.http.routers."+id+".rule=Host(`"+host+"`)")
		start := time.Now()
		d, err := pollFast(start.Add(e2eTimeout), func() error {
			r, err := harness.Get(url, harness.Host(host))
			if err != nil {
				return err
			}
			if r.StatusCode != 200 {
				return fmt.Errorf("status %d", r.StatusCode)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("registration %d never routed: %v", i, err)
		}
		took = append(took, d.Sub(start))
	}
	t.Logf("registration → first 200 through gantry (poll every %v, debounce 50ms): %s", latencyPoll, summary(took))
}

// TestProviderLatency measures the catalog provider alone: from a
// registration returning to the first snapshot that routes it (logged, not
// asserted).
func TestProviderLatency(t *testing.T) {
	a := startAgent(t)
	log, logs := logger()
	p, err := consul.NewCatalog(catalogOpts(a), log)
	if err != nil {
		t.Fatal(err)
	}
	c := run(t, p, logs)
	c.await(t, "first snapshot", routerIs("lat-0", ""))
	var took []time.Duration
	for i := range latencyRuns {
		id := fmt.Sprintf("lat-%d", i)
		a.register(t, registerOpts{id: id, name: id, addr: "127.0.0.1", port: 9000 + i, tags: []string{"traefik.enable=true"}})
		start := time.Now()
		at, err := pollFast(start.Add(changeTimeout), func() error {
			if s, n := c.last(); n > 0 && s.Config != nil && s.Config.HTTP.Routers[id] != nil {
				return nil
			}
			return fmt.Errorf("router %s not published", id)
		})
		if err != nil {
			t.Fatal(err)
		}
		took = append(took, at.Sub(start))
	}
	t.Logf("registration → snapshot (poll every %v): %s", latencyPoll, summary(took))
}

// summary renders p50, p99, min and max of took (sorted in place).
func summary(took []time.Duration) string {
	slices.Sort(took)
	p := func(q float64) time.Duration { return took[int(q*float64(len(took)-1)+0.5)] }
	return fmt.Sprintf("n=%d p50 %v p99 %v min %v max %v", len(took), p(0.50), p(0.99), took[0], took[len(took)-1])
}

// latencyPoll is the pause between two probes of pollFast: fine enough not
// to dominate the measurement, coarse enough not to load the machine.
const latencyPoll = 5 * time.Millisecond

// pollFast calls f every latencyPoll until it returns nil and returns when
// that happened, or f's last error after deadline.
func pollFast(deadline time.Time, f func() error) (time.Time, error) {
	tick := time.NewTicker(latencyPoll)
	defer tick.Stop()
	for {
		err := f()
		if err == nil {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("not before the deadline: %w", err)
		}
		<-tick.C
	}
}
