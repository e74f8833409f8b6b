package docker

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
)

// latencyStarts is how many starts testStartLatency measures.
const latencyStarts = 20

// testStartLatency measures the time from ContainerStart (the API call
// `docker start` makes) to the first 200 through Gantry, over latencyStarts
// fresh containers, and logs p50 and p99; it also logs the share after the
// start call returned, since on a loaded machine dockerd's own start time
// dominates. It asserts nothing about the figures (performance is
// reported, not asserted); run with -v to see them.
func testStartLatency(t *testing.T, e *env) {
	ctx := context.Background()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var got, after []time.Duration
	for i := range latencyStarts {
		name := "lat-" + itoa(i)
		host := name + ".test"
		id := e.run(t, &whoami{name: name, labels: rule(name, host), noStart: true})
		req, err := http.NewRequest(http.MethodGet, e.url("/"), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		start := time.Now()
		if err := e.eng.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
			t.Fatal(err)
		}
		startCall := time.Since(start)
		// A tight poll: the figure is the point of this test.
		deadline := start.Add(wait)
		for {
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no 200 within %v (last: %v)", name, wait, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		total := time.Since(start)
		got = append(got, total)
		after = append(after, total-startCall)
		if err := e.eng.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("docker start -> first 200 through Gantry over %d starts: %s", len(got), quantiles(got))
	t.Logf("of which after the start call returned (Gantry's share): %s", quantiles(after))
}

// quantiles renders p50, p99 and max of ds (sorted in place).
func quantiles(ds []time.Duration) string {
	slices.Sort(ds)
	p := func(q float64) time.Duration { return ds[int(q*float64(len(ds)-1)+0.5)].Round(time.Millisecond) }
	return fmt.Sprintf("p50 %v, p99 %v, max %v", p(0.50), p(0.99), ds[len(ds)-1].Round(time.Millisecond))
}
