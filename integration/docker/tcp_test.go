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

	"github.com/docker/docker/api/types/container"

	"github.com/gantry-proxy/gantry/integration/harness"
)

const redisImage = "gantry-it/redis:test"

// redisContext copies the host's redis-server and the shared libraries it
// needs (ldd) into dir/ctx-redis, keeping their paths. It returns false
// when redis-server is not installed (the TCP test then reports it).
func redisContext(dir string) (bool, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return false, nil
	}
	bin, _ = filepath.EvalSymlinks(bin)
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		return false, fmt.Errorf("ldd %s: %w", bin, err)
	}
	files := []string{bin}
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				files = append(files, f)
			}
		}
	}
	ctx := filepath.Join(dir, "ctx-redis")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		dst := filepath.Join(ctx, "usr/bin/redis-server")
		if f != bin {
			dst = filepath.Join(ctx, f)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return false, err
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			return false, err
		}
	}
	return true, nil
}

// A compose-style Redis container routed by traefik.tcp labels only: the
// implicit TCP service (named after the compose service, the exposed port
// 6379) behind HostSNI(`*`) on Gantry's redis entrypoint; redis-cli talks
// to it through Gantry, and no HTTP router is made for it.
func testTCPRedisByLabels(t *testing.T, e *env) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil || !e.redisImage {
		harness.MissingTool(t, "redis-server/redis-cli not installed: run scripts/setup/tcpudp.sh")
	}
	ctx := context.Background()
	cfg := &container.Config{Image: redisImage, Labels: map[string]string{
		"com.docker.compose.project":            "stack",
		"com.docker.compose.service":            "cache",
		"traefik.tcp.routers.cache.entrypoints": "redis",
		"traefik.tcp.routers.cache.rule":        "HostSNI(`*`)",
	}}
	r, err := e.eng.cli.ContainerCreate(ctx, cfg, &container.HostConfig{NetworkMode: netName}, nil, nil, "stack-cache-1")
	if err != nil {
		t.Fatalf("create redis: %v", err)
	}
	t.Cleanup(func() { e.eng.cli.ContainerRemove(context.Background(), r.ID, container.RemoveOptions{Force: true}) })
	if err := e.eng.cli.ContainerStart(ctx, r.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start redis: %v", err)
	}
	host, port, _ := strings.Cut(e.redis, ":")
	harness.Try(t, wait, func() error {
		out, err := exec.Command(cli, "-h", host, "-p", port, "SET", "k", "via-labels").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "OK") {
			return fmt.Errorf("redis-cli SET through gantry: %v %s", err, out)
		}
		return nil
	})
	out, err := exec.Command(cli, "-h", host, "-p", port, "GET", "k").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "via-labels" {
		t.Fatalf("GET: %v %q", err, out)
	}
	harness.Try(t, 10*time.Second, func() error {
		r, err := harness.Get("http://" + e.api + "/api/tcp/routers/cache@docker")
		if err != nil {
			return err
		}
		if r.StatusCode != 200 || !strings.Contains(r.Body, `"service":"cache-stack@docker"`) {
			return fmt.Errorf("api: %d %s", r.StatusCode, r.Body)
		}
		return nil
	})
	if r, err := harness.Get("http://" + e.api + "/api/http/routers/cache-stack@docker"); err != nil || r.StatusCode != 404 {
		t.Errorf("a TCP-only container must get no HTTP router: %v %v", r, err)
	}
}
