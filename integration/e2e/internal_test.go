package e2e

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// The internal provider through the binary: api.insecure, ping and
// metrics.prometheus answer on the "traefik" entrypoint; during shutdown
// (within requestAcceptGraceTimeout) /ping answers 503 so a load balancer
// in front stops sending traffic.
func TestInternalEndpoints(t *testing.T) {
	w := harness.StartWhoami(t, "int")
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(`
http:
  routers:
    app: {rule: "Host(`+"`app.test`"+`)", service: app}
  services:
    app:
      loadBalancer:
        servers: [{url: "http://%s"}]
`, w))
	web, adm := harness.FreeAddr(t), harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: %q
  traefik:
    address: %q
    transport:
      lifeCycle:
        requestAcceptGraceTimeout: 3s
providers:
  file:
    directory: %q
api:
  insecure: true
ping: {}
metrics:
  prometheus: {}
`, web, adm, dyn))
	harness.TryGet(t, wait, "http://"+web+"/", harness.Host("app.test"), harness.StatusIs(200))
	admin := "http://" + adm
	harness.TryGet(t, wait, admin+"/ping", harness.StatusIs(200), harness.BodyContains("OK"))
	harness.TryGet(t, wait, admin+"/metrics", harness.StatusIs(200),
		harness.BodyContains("traefik_config_reloads_total"),
		harness.BodyContains(`traefik_service_requests_total{code="200",method="GET",protocol="http",service="app@file"}`))
	harness.TryGet(t, wait, admin+"/api/http/routers", harness.StatusIs(200),
		harness.BodyContains(`"name":"app@file"`), harness.BodyContains(`"name":"api@internal"`))
	harness.TryGet(t, wait, admin+"/dashboard/", harness.StatusIs(200))

	if err := g.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	harness.TryGet(t, wait, admin+"/ping", harness.StatusIs(503))
	if code := g.Wait(t, wait); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// TestAPIUnderBasePath: with api.basePath (Traefik v3.4) the API and the
// dashboard answer under the prefix, and no longer at the root.
func TestAPIUnderBasePath(t *testing.T) {
	adm := harness.FreeAddr(t)
	harness.Start(t, fmt.Sprintf(`
entryPoints:
  traefik:
    address: %q
api:
  insecure: true
  basePath: /gantry/
`, adm))
	admin := "http://" + adm
	harness.TryGet(t, wait, admin+"/gantry/api/http/routers", harness.StatusIs(200), harness.BodyContains(`"name":"api@internal"`))
	harness.TryGet(t, wait, admin+"/gantry/dashboard/", harness.StatusIs(200))
	harness.TryGet(t, wait, admin+"/api/http/routers", harness.StatusIs(404))
}

// TestUndefinedResolverIsAProblem: with no certificatesResolvers at all, a
// router asking for one is served the default certificate and listed in
// /api/problems, naming the router and the resolver (it was silent).
func TestUndefinedResolverIsAProblem(t *testing.T) {
	w := harness.StartWhoami(t, "res")
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(`
http:
  routers:
    app:
      rule: "Host(`+"`app.test`"+`)"
      service: app
      tls: {certResolver: le}
  services:
    app:
      loadBalancer:
        servers: [{url: "http://%s"}]
`, w))
	websecure, adm := harness.FreeAddr(t), harness.FreeAddr(t)
	harness.Start(t, fmt.Sprintf(`
entryPoints:
  websecure:
    address: %q
  traefik:
    address: %q
providers:
  file:
    directory: %q
api:
  insecure: true
`, websecure, adm, dyn))
	harness.TryGet(t, wait, "http://"+adm+"/api/problems", harness.StatusIs(200),
		harness.BodyContains(`router app@file`), harness.BodyContains(`certificate resolver \"le\" is not defined`))
}
