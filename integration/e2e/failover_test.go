package e2e

import (
	"fmt"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Case 061, through the binary: a failover whose main service has neither
// a health check nor errors.status is refused, as Traefik refuses it — its
// router is in error naming the failover and its main, /api/problems says
// so, and the host answers 404 instead of a dead main's 502 forever. The
// same main with errors.status ["502"] fails over to the fallback.
func TestCase061FailoverWithoutHealthCheckRefused(t *testing.T) {
	fb := harness.StartWhoami(t, "fallback")
	dyn := t.TempDir()
	dead := harness.FreeAddr(t)
	harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(`
http:
  routers:
    nohc:   {rule: "Host(`+"`nohc.test`"+`)", service: fo-nohc}
    errref: {rule: "Host(`+"`errref.test`"+`)", service: fo-errref}
  services:
    main-nohc: {loadBalancer: {servers: [{url: "http://%s"}]}}
    fb:        {loadBalancer: {servers: [{url: "http://%s"}]}}
    fo-nohc:   {failover: {service: main-nohc, fallback: fb}}
    fo-errref: {failover: {service: main-nohc, fallback: fb, errors: {status: ["502"]}}}
`, dead, fb))
	web, adm := harness.FreeAddr(t), harness.FreeAddr(t)
	harness.Start(t, fmt.Sprintf(`
entryPoints:
  web: {address: %q}
  traefik: {address: %q}
providers:
  file: {directory: %q}
api: {insecure: true}
`, web, adm, dyn))
	harness.TryGet(t, wait, "http://"+adm+"/api/problems", harness.StatusIs(200),
		harness.BodyContains(`fo-nohc@file`), harness.BodyContains(`main service main-nohc@file has no healthCheck`))
	harness.TryGet(t, wait, "http://"+adm+"/api/http/services/fo-nohc@file", harness.BodyContains(`"status":"disabled"`))
	harness.TryGet(t, wait, "http://"+web+"/", harness.Host("nohc.test"), harness.StatusIs(404))
	harness.TryGet(t, wait, "http://"+web+"/", harness.Host("errref.test"), harness.StatusIs(200), harness.BodyContains("Hostname"))
}
