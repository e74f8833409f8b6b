package tlsroute

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Case 059 through the binary: a router without entryPoints is on the
// asDefault entrypoints, else on all of them, never on the API's
// "traefik" entrypoint; the API shows where it is.
func TestDefaultEntryPointsNeverTheAPI(t *testing.T) {
	w := harness.StartWhoami(t, "defaults")
	for _, variant := range []struct {
		name, webExtra string
		want           []string
	}{
		{"no asDefault", "", []string{"admin", "web"}},
		{"web asDefault", ", asDefault: true", []string{"web"}},
	} {
		t.Run(variant.name, func(t *testing.T) {
			dyn := t.TempDir()
			harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(`
http:
  routers:
    app: {rule: "Host(`+"`app.example.com`"+`)", service: s}
  services:
    s: {loadBalancer: {servers: [{url: "http://%s"}]}}
`, w))
			g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web: {address: %q%s}
  admin: {address: %q}
  traefik: {address: %q, asDefault: true}
api: {insecure: true}
providers: {file: {directory: %q}}
`, harness.FreeAddr(t), variant.webExtra, harness.FreeAddr(t), harness.FreeAddr(t), dyn))
			g.WaitOutput(t, wait, "config applied")
			if g.CountOutput("entryPoints.traefik.asDefault is ignored") == 0 {
				t.Errorf("no warning about asDefault on the traefik entrypoint")
			}
			for _, ep := range []string{"web", "admin", "traefik"} {
				req, _ := http.NewRequest("GET", "http://"+g.EntryPoints[ep]+"/", nil)
				req.Host = "app.example.com"
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				want := 404
				if slices.Contains(variant.want, ep) {
					want = 200
				}
				if resp.StatusCode != want {
					t.Errorf("app.example.com on %s: %d, want %d", ep, resp.StatusCode, want)
				}
			}
			var r struct {
				EntryPoints []string `json:"entryPoints"`
				Using       []string `json:"using"`
			}
			apiJSON(t, g.EntryPoints["traefik"], "/api/http/routers/app@file", &r)
			if !slices.Equal(r.EntryPoints, variant.want) || !slices.Equal(r.Using, variant.want) {
				t.Errorf("API: entryPoints %v using %v, want %v", r.EntryPoints, r.Using, variant.want)
			}
		})
	}
}
