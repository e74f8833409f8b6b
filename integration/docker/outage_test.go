package docker

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// testOutage is case 016: with dockerd stopped, Gantry keeps serving the
// last Docker configuration; when dockerd is back, changes flow again
// without restarting Gantry. The engine runs with --live-restore, so the
// containers keep running while the daemon is down; its port proxies stop
// with it, so during the outage the test reaches Gantry on 127.0.0.1 inside
// Gantry's own network namespace.
func testOutage(t *testing.T, e *env) {
	e.run(t, &whoami{name: "steady", labels: rule("steady", "steady.test")})
	harness.TryGet(t, wait, e.url("/"), harness.Host("steady.test"), harness.StatusIs(200), harness.BodyContains("Name: steady"))

	if err := e.eng.stop(); err != nil {
		t.Fatal(err)
	}
	inside := netnsClient(e.gantryPID)
	get := func(host, path string) (int, string, error) {
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:80"+path, nil)
		if err != nil {
			return 0, "", err
		}
		req.Host = host
		resp, err := inside.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	// Gantry notices: the docker source turns to error...
	harness.Try(t, wait, func() error {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:8080/api/providers", nil)
		resp, err := inside.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(b), "cannot connect to the Docker daemon") && !strings.Contains(string(b), "event stream") {
			return fmt.Errorf("docker source shows no error yet: %.300s", b)
		}
		return nil
	})
	// ...and the last configuration keeps serving.
	for i := range 5 {
		code, body, err := get("steady.test", "/")
		if err != nil || code != 200 || !strings.Contains(body, "Name: steady") {
			t.Fatalf("request %d during the outage: %d %v %.200q", i, code, err, body)
		}
	}

	if err := e.eng.start(); err != nil {
		t.Fatal(err)
	}
	e.run(t, &whoami{name: "after", labels: rule("after", "after.test")})
	// The provider reconnects after its backoff (at most 30 s).
	harness.TryGet(t, 2*wait, e.url("/"), harness.Host("after.test"), harness.StatusIs(200), harness.BodyContains("Name: after"))
	harness.TryGet(t, wait, e.url("/"), harness.Host("steady.test"), harness.StatusIs(200), harness.BodyContains("Name: steady"))
}
