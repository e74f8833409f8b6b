package consul

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
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
		d, err := firstOK(url, host, start.Add(e2eTimeout))
		if err != nil {
			t.Fatalf("registration %d never routed: %v", i, err)
		}
		took = append(took, d.Sub(start))
	}
	t.Logf("in order: %v", took)
	slices.Sort(took)
	p := func(q float64) time.Duration { return took[int(q*float64(len(took)-1)+0.5)] }
	t.Logf("registration → first 200 over %d registrations: p50 %v, p99 %v, min %v, max %v (poll every %v, debounce 50ms)",
		len(took), p(0.50), p(0.99), took[0], took[len(took)-1], latencyPoll)
}

// latencyPoll is the pause between two probes of firstOK: fine enough not
// to dominate the measurement, coarse enough not to load the machine.
const latencyPoll = 5 * time.Millisecond

// firstOK probes host until it answers 200 and returns when that answer
// arrived, or an error with the last status after deadline.
func firstOK(url, host string, deadline time.Time) (time.Time, error) {
	tick := time.NewTicker(latencyPoll)
	defer tick.Stop()
	last := "no answer"
	for time.Now().Before(deadline) {
		r, err := harness.Get(url, harness.Host(host))
		switch {
		case err != nil:
			last = err.Error()
		case r.StatusCode == 200:
			return time.Now(), nil
		default:
			last = fmt.Sprintf("status %d", r.StatusCode)
		}
		<-tick.C
	}
	return time.Time{}, fmt.Errorf("no 200 before the deadline: %s", last)
}
