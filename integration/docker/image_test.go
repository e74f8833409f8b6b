package docker

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 15: scripts/image.sh builds the gantry and whoami images from
// binaries compiled here, FROM scratch with Dockerfile.local, without any
// registry (the repository's Dockerfile needs Docker Hub for FROM golang).
func TestImageScriptNeedsNoRegistry(t *testing.T) {
	e := getEnv(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "image.sh"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // bounds a loaded machine's build
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+e.eng.host(), "GANTRY_IMAGE=gantry:imagescript", "WHOAMI_IMAGE=whoami:imagescript")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/image.sh: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "GANTRY_IMAGE=gantry:imagescript WHOAMI_IMAGE=whoami:imagescript ./scripts/compose.sh up -d") {
		t.Errorf("image.sh does not say how to use the images:\n%s", out)
	}
	v, err := e.eng.docker(ctx, "run", "--rm", "gantry:imagescript", "version")
	if err != nil || !strings.Contains(v, "Version:") {
		t.Errorf("gantry:imagescript version: %v %q", err, v)
	}
	// lego's DNS-01 providers ship beside /gantry, where it runs them.
	if v, err := e.eng.docker(ctx, "run", "--rm", "--entrypoint", "/gantry-dns", "gantry:imagescript", "names"); err != nil || !strings.Contains(v, "\ncloudflare\n") || !strings.Contains(v, "\nroute53\n") {
		t.Errorf("gantry:imagescript /gantry-dns names: %v %q", err, v)
	}
	if v, err := e.eng.docker(ctx, "image", "inspect", "--format", "{{.Config.Entrypoint}}", "whoami:imagescript"); err != nil || !strings.Contains(v, "/whoami") {
		t.Errorf("whoami:imagescript entrypoint: %v %q", err, v)
	}
}
