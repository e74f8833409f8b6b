package docker

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Test images of Debian's servers, FROM scratch (see package localimage).
const (
	redisImage    = "gantry-it/redis:test"
	postgresImage = "gantry-it/postgres:test"
)

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
	harness.Try(t, 60*time.Second, func() error {
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

// Issue 14's done-when: examples/tcp/docker-compose.yml, a file written for
// Traefik v3 (its proxy image defaults to traefik:v3.6), runs unchanged
// with PROXY_IMAGE set to Gantry and FROM scratch images of Debian's
// redis-server and postgresql in place of the official ones. Redis is
// reached with redis-cli through HostSNI(`*`); Postgres with psql
// "sslmode=require" through HostSNI routers after its STARTTLS, once with
// TLS passthrough (Postgres's own certificate, ssl on in pg_stat_ssl) and
// once with termination (Gantry's default certificate, plain text to
// Postgres).
func TestComposeTCP(t *testing.T) {
	needDocker(t)
	compose := composeCommand()
	if compose == nil {
		harness.MissingTool(t, "docker-compose not installed: run scripts/setup/docker.sh")
	}
	cli, errR := exec.LookPath("redis-cli")
	psql, errP := exec.LookPath("psql")
	openssl, errO := exec.LookPath("openssl")
	if errR != nil || errP != nil || errO != nil {
		harness.MissingTool(t, "redis-cli, psql or openssl not installed: run scripts/setup/tcpudp.sh")
	}
	e := getEnv(t)
	if !e.redisImage || !e.postgresImage {
		harness.MissingTool(t, "redis-server or postgresql not installed: run scripts/setup/tcpudp.sh")
	}
	file, err := filepath.Abs(filepath.Join("..", "..", "examples", "tcp", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	redis, pg, api := harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t)
	run := composeRunner(compose, file, "gantrytcp", e,
		"PROXY_IMAGE="+gantryImage,
		"REDIS_IMAGE="+redisImage,
		"POSTGRES_IMAGE="+postgresImage,
		"PROXY_REDIS="+redis,
		"PROXY_POSTGRES="+pg,
		"PROXY_API="+api,
	)
	composeUp(t, run)
	logs := func() string { out, _ := run(context.Background(), "logs", "--no-color", "--tail", "40"); return out }

	rhost, rport, _ := strings.Cut(redis, ":")
	if err := harness.Poll(wait, func() error {
		out, err := exec.Command(cli, "-h", rhost, "-p", rport, "SET", "k", "compose").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "OK" {
			return fmt.Errorf("redis-cli SET through the proxy: %v %q", err, out)
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, logs())
	}
	if out, err := exec.Command(cli, "-h", rhost, "-p", rport, "GET", "k").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "compose" {
		t.Errorf("redis-cli GET: %v %q", err, out)
	}

	_, pport, _ := strings.Cut(pg, ":")
	query := "select ssl from pg_stat_ssl where pid = pg_backend_pid()"
	for _, tc := range []struct{ host, wantSSL, wantCN string }{
		{"db.localhost", "t", "CN = db.localhost"},        // passthrough: Postgres's certificate
		{"pg.localhost", "f", "CN = GANTRY DEFAULT CERT"}, // termination at Gantry
	} {
		conn := fmt.Sprintf("host=%s hostaddr=127.0.0.1 port=%s user=postgres sslmode=require connect_timeout=5", tc.host, pport)
		if err := harness.Poll(wait, func() error {
			out, err := exec.Command(psql, conn, "-Atc", query).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != tc.wantSSL {
				return fmt.Errorf("psql %s: %v %q, want ssl=%s", tc.host, err, out, tc.wantSSL)
			}
			return nil
		}); err != nil {
			t.Fatalf("%v\n%s", err, logs())
		}
		// The certificate psql got: openssl's own Postgres STARTTLS.
		out, _ := exec.Command(openssl, "s_client", "-starttls", "postgres", "-connect", pg,
			"-servername", tc.host).CombinedOutput()
		if !strings.Contains(string(out), "subject="+strings.ReplaceAll(tc.wantCN, " = ", "=")) &&
			!strings.Contains(string(out), tc.wantCN) {
			t.Errorf("%s: certificate is not %q:\n%.600s", tc.host, tc.wantCN, out)
		}
	}
	harness.TryGet(t, 60*time.Second, "http://"+api+"/api/tcp/routers", harness.StatusIs(200),
		harness.BodyContains(`"name":"redis@docker"`), harness.BodyContains(`"name":"db@docker"`),
		harness.BodyContains(`"name":"pg@docker"`))
}
