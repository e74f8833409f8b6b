package dashboard

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestPrometheusHeaderLabels: metrics.prometheus.headerLabels adds one
// label per entry to the entrypoint, router and service requests_total
// counters, valued from the request header (Host from the request's host,
// "" when absent); the other families keep Traefik's labels only.
func TestPrometheusHeaderLabels(t *testing.T) {
	dir := t.TempDir()
	backend := "http://" + harness.StartWhoami(t, "backend-1")
	harness.WriteFile(t, dir, "dynamic.yml", dynamicConfig(backend, "first"))
	static := strings.Replace(staticConfig(harness.FreeAddr(t), harness.FreeAddr(t), dir), "    addRoutersLabels: true\n",
		"    addRoutersLabels: true\n    headerLabels:\n      tenant: X-Tenant\n      vhost: Host\n", 1)
	g := harness.Start(t, static)
	e := &env{g: g, dir: dir, backend: backend, admin: g.URL(t, "traefik", "")}
	e.waitRouters(t, "first")
	send := func(tenant string, n int) {
		for range n {
			req, _ := http.NewRequest("GET", g.URL(t, "web", "/"), nil)
			req.Host = "first.example"
			if tenant != "" {
				req.Header.Set("X-Tenant", tenant)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	send("acme", 3)
	send("globex", 2)
	send("", 1)
	var body string
	harness.Try(t, 60*time.Second, func() error {
		r, err := harness.Get(e.admin + "/metrics")
		if err != nil {
			return err
		}
		body = r.Body
		if v := metricValue(body, `traefik_entrypoint_requests_total{code="200",entrypoint="web",method="GET",protocol="http",tenant="acme",vhost="first.example"}`); v != 3 {
			return fmt.Errorf("entrypoint counter for tenant acme: %v, want 3", v)
		}
		return nil
	})
	for series, want := range map[string]float64{
		`traefik_entrypoint_requests_total{code="200",entrypoint="web",method="GET",protocol="http",tenant="globex",vhost="first.example"}`:                    2,
		`traefik_entrypoint_requests_total{code="200",entrypoint="web",method="GET",protocol="http",tenant="",vhost="first.example"}`:                          1,
		`traefik_router_requests_total{code="200",method="GET",protocol="http",router="first@file",service="whoami@file",tenant="acme",vhost="first.example"}`: 3,
		`traefik_service_requests_total{code="200",method="GET",protocol="http",service="whoami@file",tenant="globex",vhost="first.example"}`:                  2,
	} {
		if v := metricValue(body, series); v != want {
			t.Errorf("%s = %v, want %v", series, v, want)
		}
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "traefik_entrypoint_request_duration_seconds_count") && strings.Contains(line, "tenant=") {
			t.Errorf("a header label on a family other than requests_total: %s", line)
		}
	}
}
