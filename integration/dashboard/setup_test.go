package dashboard

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// staticConfig starts gantry with the API insecure on a loopback "traefik"
// entrypoint, Prometheus metrics, and a watched dynamic directory.
func staticConfig(web, admin, dir string) string {
	return fmt.Sprintf(`entryPoints:
  web:
    address: "%s"
  traefik:
    address: "%s"
api:
  insecure: true
  dashboard: true
metrics:
  prometheus:
    addRoutersLabels: true
providers:
  providersThrottleDuration: 50ms
  file:
    directory: "%s"
    watch: true
`, web, admin, dir)
}

// dynamicConfig routes Host(<name>.example) to the whoami backend through
// one router per name, with an active health check.
func dynamicConfig(backend string, names ...string) string {
	var b strings.Builder
	b.WriteString("http:\n  routers:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "    %s:\n      entryPoints: [web]\n      rule: Host(`%s.example`)\n      service: whoami\n", n, n)
	}
	fmt.Fprintf(&b, `  services:
    whoami:
      loadBalancer:
        healthCheck:
          path: /health
          interval: 200ms
          timeout: 1s
        servers:
          - url: "%s"
`, backend)
	return b.String()
}

type env struct {
	g       *harness.Gantry
	dir     string
	backend string
	admin   string // http://127.0.0.1:port of the traefik entrypoint
}

// start runs whoami and gantry with routers names and waits until the API
// lists every one of them.
func start(t *testing.T, names ...string) *env {
	t.Helper()
	e := &env{dir: t.TempDir()}
	e.backend = "http://" + harness.StartWhoami(t, "backend-1")
	harness.WriteFile(t, e.dir, "dynamic.yml", dynamicConfig(e.backend, names...))
	e.g = harness.Start(t, staticConfig(harness.FreeAddr(t), harness.FreeAddr(t), e.dir))
	e.admin = e.g.URL(t, "traefik", "")
	e.waitRouters(t, names...)
	return e
}

// frontProxy serves e's API and dashboard through a reverse proxy in
// front of Gantry, as an operator's proxy or a slow link would, and
// returns its URL; handle answers a request itself when it returns true
// (it may use the proxy rp, or read e.admin directly), else the request
// passes through.
func (e *env) frontProxy(t *testing.T, handle func(w http.ResponseWriter, r *http.Request) bool) string {
	t.Helper()
	target, err := url.Parse(e.admin)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !handle(w, r) {
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (e *env) waitRouters(t *testing.T, names ...string) {
	t.Helper()
	conds := []any{harness.StatusIs(200)}
	for _, n := range names {
		conds = append(conds, harness.BodyContains(`"name":"`+n+`@file"`))
	}
	harness.TryGet(t, 60*time.Second, e.admin+"/api/http/routers", conds...)
}

// metricValue is the value of series (a Prometheus series as exposed, e.g.
// `traefik_config_reloads_total` or `name{label="v"}`, matched literally)
// in the /metrics body, -1 when body lacks it.
func metricValue(body, series string) float64 {
	m := regexp.MustCompile(regexp.QuoteMeta(series) + ` (\S+)`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}
