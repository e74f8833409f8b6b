package dashboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestMetricsAfterTraffic sends requests through a real gantry and scrapes
// /metrics on the traefik entrypoint: the request counters must count them
// and traefik_service_server_up must report the backend up.
func TestMetricsAfterTraffic(t *testing.T) {
	e := start(t, "first")
	const n = 25
	for i := range n {
		harness.TryGet(t, 60*time.Second, e.g.URL(t, "web", fmt.Sprintf("/r%d", i)), harness.Host("first.example"), harness.StatusIs(200))
	}
	harness.TryGet(t, 60*time.Second, e.g.URL(t, "web", "/"), harness.Host("nobody.example"), harness.StatusIs(404))

	// A request is counted after its response is written: the last ones
	// (the 404 above all) may reach the counters after the client has its
	// answer, so the scrape is repeated until every series is there.
	var body string
	harness.Try(t, 60*time.Second, func() error {
		r, err := harness.Get(e.admin + "/metrics")
		if err != nil {
			return err
		}
		body = r.Body
		if got := metricValue(body, `traefik_entrypoint_requests_total{code="200",entrypoint="web",method="GET",protocol="http"}`); got < n {
			return fmt.Errorf("entrypoint 200 counter %v, want >= %d", got, n)
		}
		if got := metricValue(body, `traefik_router_requests_total{code="200",method="GET",protocol="http",router="first@file",service="whoami@file"}`); got < n {
			return fmt.Errorf("router counter %v, want %d", got, n)
		}
		if got := metricValue(body, `traefik_entrypoint_requests_total{code="404",entrypoint="web",method="GET",protocol="http"}`); got < 1 {
			return fmt.Errorf("entrypoint 404 counter %v, want >= 1", got)
		}
		if got := metricValue(body, `traefik_service_server_up{service="whoami@file",url="`+e.backend+`"}`); got != 1 {
			return fmt.Errorf("service_server_up %v, want 1", got)
		}
		return nil
	})
	for _, series := range []string{
		`traefik_service_requests_total{code="200",method="GET",protocol="http",service="whoami@file"}`,
		`traefik_config_reloads_total`,
		`traefik_open_connections{entrypoint="web",protocol="TCP"}`,
	} {
		if metricValue(body, series) < 0 {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	if got := metricValue(body, `traefik_router_requests_total{code="200",method="GET",protocol="http",router="first@file",service="whoami@file"}`); got != n {
		t.Errorf("router counter %v, want %d", got, n)
	}
}
