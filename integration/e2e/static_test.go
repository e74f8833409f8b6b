package e2e

import (
	"fmt"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// A traefik.toml as written for Traefik, with its address overridden by a
// GANTRY_* variable and its log level by a flag: the route is served on the
// overriding address, and the option Gantry does not support is named in
// a warning.
func TestStaticTOMLEnvAndFlags(t *testing.T) {
	w := harness.StartWhoami(t, "toml")
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.toml", fmt.Sprintf(`
[http.routers.app]
  rule = "Host(`+"`toml.test`"+`)"
  service = "app"
[[http.services.app.loadBalancer.servers]]
  url = "http://%s"
`, w))
	web := harness.FreeAddr(t)
	g := harness.StartWith(t, harness.Options{
		Format: "toml",
		Static: fmt.Sprintf(`
[entryPoints.web]
  address = "127.0.0.1:1"   # replaced by GANTRY_ENTRYPOINTS_WEB_ADDRESS

[providers.file]
  directory = %q

[log]
  level = "ERROR"           # replaced by --log.level=INFO

[certificatesResolvers.le.acme]
  email = "ops@example.com"
`, dyn),
		Env:    []string{"GANTRY_ENTRYPOINTS_WEB_ADDRESS=" + web},
		Args:   []string{"--log.level=INFO"},
		NoWait: true,
	})
	harness.TryGet(t, wait, "http://"+web+"/", harness.Host("toml.test"), harness.StatusIs(200), harness.BodyContains("Name: toml"))
	// A resolver without a challenge is skipped, as Traefik skips it, and
	// Gantry keeps serving.
	g.WaitOutput(t, wait, "certificate resolvers skipped")
	g.WaitOutput(t, wait, "certificatesResolvers.le.acme: no challenge")
	g.WaitOutput(t, wait, `msg="config applied"`) // INFO lines shown: the flag won over the file
}
