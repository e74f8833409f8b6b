package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func setHealth(t *testing.T, backend string, code int) {
	t.Helper()
	resp, err := http.Post(backend+"/health", "text/plain", strings.NewReader(fmt.Sprint(code)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s/health: %d", backend, resp.StatusCode)
	}
}

// TestServerStatusFollowsHealthCheck is case 032's API half: the status of
// each server in /api/http/services must follow the active health check
// (Traefik issue 5503 showed UP while the server had been removed), and the
// proxy answers 503 while no server is up.
func TestServerStatusFollowsHealthCheck(t *testing.T) {
	e := start(t, "first")
	svc := e.admin + "/api/http/services/whoami@file"
	status := func(want string) harness.Cond {
		return func(r *harness.Response) error {
			var s struct {
				ServerStatus map[string]string `json:"serverStatus"`
			}
			if err := json.Unmarshal([]byte(r.Body), &s); err != nil {
				return err
			}
			if got := s.ServerStatus[e.backend]; got != want {
				return fmt.Errorf("server %s is %q, want %q", e.backend, got, want)
			}
			return nil
		}
	}
	harness.TryGet(t, 60*time.Second, svc, harness.StatusIs(200), status("UP"))

	setHealth(t, e.backend, 503)
	harness.TryGet(t, 60*time.Second, svc, status("DOWN"))
	harness.TryGet(t, 60*time.Second, e.g.URL(t, "web", "/"), harness.Host("first.example"), harness.StatusIs(503))
	harness.TryGet(t, 60*time.Second, e.admin+"/api/overview", harness.BodyContains(`"servers":{"down":1,"total":1}`))

	setHealth(t, e.backend, 200)
	harness.TryGet(t, 60*time.Second, svc, status("UP"))
	harness.TryGet(t, 60*time.Second, e.g.URL(t, "web", "/"), harness.Host("first.example"), harness.StatusIs(200))
}

// TestRouterErrorsAreVisible is case 008's dashboard parity note: a router
// that cannot be built shows its error in the API (router, problems),
// instead of only in the logs, while the others keep serving.
func TestRouterErrorsAreVisible(t *testing.T) {
	e := start(t, "first")
	harness.WriteFile(t, e.dir, "broken.yml", "http:\n  routers:\n    hub:\n      entryPoints: [web, ws]\n      rule: Host(`hub.example`)\n      service: hub-svc\n")
	r := harness.TryGet(t, 60*time.Second, e.admin+"/api/http/routers/hub@file", harness.StatusIs(200))
	for _, want := range []string{`"status":"disabled"`, `service \"hub-svc@file\" does not exist`, `entrypoint \"ws\" does not exist`} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("router hub@file lacks %s: %s", want, r.Body)
		}
	}
	// The routing problem names where the router is defined (file:line:col).
	harness.TryGet(t, 60*time.Second, e.admin+"/api/problems", harness.BodyContains(`broken.yml:3:5 (router hub@file)"`))
	harness.TryGet(t, 60*time.Second, e.admin+"/api/overview", harness.BodyContains(`"routers":{"errors":1`))
	harness.TryGet(t, 60*time.Second, e.g.URL(t, "web", "/"), harness.Host("first.example"), harness.StatusIs(200))
	harness.TryGet(t, 60*time.Second, e.g.URL(t, "web", "/"), harness.Host("hub.example"), harness.StatusIs(404))
}
