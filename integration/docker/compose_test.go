package docker

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// composeCommand returns the Compose command line, scripts/compose.sh (the
// README's spelling); nil when neither the docker compose plugin nor
// Debian's docker-compose is installed.
func composeCommand() []string {
	_, errV1 := exec.LookPath("docker-compose")
	if errV1 != nil && exec.Command("docker", "compose", "version").Run() != nil {
		return nil
	}
	// The README's one spelling: scripts/compose.sh picks the plugin or
	// Debian's docker-compose.
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "compose.sh"))
	if err != nil {
		return nil
	}
	return []string{"bash", script}
}

// composeRunner returns a function running compose with args on project
// of file against the test engine, with vars and DOCKER_SOCK (the engine's
// socket) in its environment.
func composeRunner(compose []string, file, project string, e *env, vars ...string) func(ctx context.Context, args ...string) (string, error) {
	return func(ctx context.Context, args ...string) (string, error) {
		argv := append(append(compose[1:len(compose):len(compose)], "-f", file, "-p", project), args...)
		cmd := exec.CommandContext(ctx, compose[0], argv...)
		cmd.Env = append(append(os.Environ(), "DOCKER_HOST="+e.eng.host(),
			"DOCKER_SOCK="+filepath.Join(e.eng.runDir(), "docker.sock")), vars...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), fmt.Errorf("%s %s: %w\n%s", compose[0], strings.Join(argv, " "), err, out)
		}
		return string(out), nil
	}
}

// composeUp starts run's project (up -d, at most 10 minutes: a bound for a
// failure on a loaded machine) and takes it down with its volumes when t
// ends.
func composeUp(t *testing.T, run func(ctx context.Context, args ...string) (string, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		if out, err := run(context.Background(), "down", "--volumes", "--remove-orphans", "--timeout", "2"); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
	})
	if out, err := run(ctx, "up", "-d", "--no-build"); err != nil {
		t.Fatalf("compose up: %v\n%s", err, out)
	}
}

// TestComposeFile brings up the repository's docker-compose.yml against the
// test engine, with the FROM scratch test images in place of the images a
// user builds or pulls, and checks that whoami answers through the
// published entrypoint, from both replicas.
func TestComposeFile(t *testing.T) {
	needDocker(t)
	compose := composeCommand()
	if compose == nil {
		harness.MissingTool(t, "docker-compose not installed: run scripts/setup/docker.sh")
	}
	e := getEnv(t)
	file, err := filepath.Abs(filepath.Join("..", "..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	web, dash := harness.FreeAddr(t), harness.FreeAddr(t)
	run := composeRunner(compose, file, "gantryit", e,
		"GANTRY_IMAGE="+gantryImage,
		"WHOAMI_IMAGE="+whoamiImage,
		"GANTRY_WEB="+web,
		"GANTRY_DASHBOARD="+dash,
	)
	composeUp(t, run)
	url := "http://" + web + "/"
	seen := map[string]bool{}
	harness.Try(t, 60*time.Second, func() error {
		r, err := harness.Get(url, harness.Host("whoami.localhost"))
		if err != nil {
			return err
		}
		if r.StatusCode != 200 || !strings.Contains(r.Body, "Hostname: ") {
			return fmt.Errorf("GET %s: %d %.200q", url, r.StatusCode, r.Body)
		}
		host, _, _ := strings.Cut(strings.SplitN(r.Body, "Hostname: ", 2)[1], "\n")
		seen[host] = true
		if len(seen) < 2 {
			return fmt.Errorf("answers from %d replica(s) so far, want 2", len(seen))
		}
		return nil
	})
	// The Traefik-labeled service with its middleware.
	harness.TryGet(t, 30*time.Second, "http://"+web+"/api/x", harness.Host("whoami.localhost"),
		harness.StatusIs(200), harness.BodyContains("GET /x "))
	// The dashboard is published too.
	harness.TryGet(t, 30*time.Second, "http://"+dash+"/api/http/routers", harness.StatusIs(200), harness.BodyContains("whoami@docker"))
}
