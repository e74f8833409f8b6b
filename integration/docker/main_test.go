package docker

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/go-connections/nat"

	"github.com/gantry-proxy/gantry/integration/docker/localimage"
	"github.com/gantry-proxy/gantry/integration/harness"
)

// Names of what the harness creates in its own engine.
const (
	netName      = "gantry-it"
	whoamiImage  = "gantry-it/whoami:test"
	gantryImage  = "gantry-it/gantry:test"
	gantryName   = "gantry"
	sockMountDir = "/var/run/dockerhost" // engine.runDir() inside the gantry container
)

// env is the shared test environment: one engine, one network, one Gantry
// container. Built on first use, torn down by TestMain.
type env struct {
	eng   *engine
	web   string // 127.0.0.1:port of Gantry's web entrypoint
	redis string // 127.0.0.1:port of Gantry's redis entrypoint (TCP routers)
	// redisImage is set when the Redis test image could be built (Debian's
	// redis-server is installed).
	redisImage bool
	// postgresImage is set when the Postgres test image could be built
	// (Debian's postgresql server is installed).
	postgresImage bool
	api           string // 127.0.0.1:port of Gantry's API (traefik entrypoint)
	gantryPID     int    // pid of Gantry's process, for its network namespace
}

var (
	envOnce sync.Once
	shared  *env
	envErr  error
	baseDir string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := teardown(); err != nil {
		fmt.Fprintln(os.Stderr, "teardown:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// needDocker stops the test when dockerd is missing (a skip, or a failure
// under CI; see harness.MissingTool).
func needDocker(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("dockerd"); err != nil {
		harness.MissingTool(t, "dockerd not installed: run scripts/setup/docker.sh")
	}
}

// getEnv returns the shared environment, setting it up on first use.
func getEnv(t *testing.T) *env {
	t.Helper()
	needDocker(t)
	envOnce.Do(func() { shared, envErr = setup() })
	if envErr != nil {
		t.Fatalf("docker test environment: %v", envErr)
	}
	return shared
}

func setup() (*env, error) {
	start := time.Now()
	dir, err := os.MkdirTemp("", "gdk")
	if err != nil {
		return nil, err
	}
	baseDir = dir
	if err := buildImageContexts(dir); err != nil {
		return nil, err
	}
	e := &env{eng: &engine{dir: dir}}
	if err := e.eng.start(); err != nil {
		return nil, err
	}
	// Bounds a failure only: four image builds (Debian's postgresql files
	// among them) took over 3 minutes on a loaded CI machine, which killed
	// docker build and failed every test of the package.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	images := map[string]string{whoamiImage: "whoami", gantryImage: "gantry"}
	dockerfiles := map[string]string{}
	for _, df := range images {
		b, err := os.ReadFile(filepath.Join("testdata", df+".Dockerfile"))
		if err != nil {
			return nil, err
		}
		dockerfiles[df] = string(b)
	}
	if ok, err := localimage.Redis(dir); err != nil {
		return nil, err
	} else if ok {
		images[redisImage], dockerfiles["redis"] = "redis", localimage.RedisDockerfile
		e.redisImage = true
	}
	if ok, err := localimage.Postgres(dir); err != nil {
		return nil, err
	} else if ok {
		images[postgresImage], dockerfiles["postgres"] = "postgres", localimage.PostgresDockerfile
		e.postgresImage = true
	}
	for img, df := range images {
		dockerfile := filepath.Join(dir, df+".Dockerfile")
		if err := os.WriteFile(dockerfile, []byte(dockerfiles[df]), 0o644); err != nil {
			return nil, err
		}
		if _, err := e.eng.docker(ctx, "build", "-q", "-t", img, "-f", dockerfile, filepath.Join(dir, "ctx-"+df)); err != nil {
			return nil, err
		}
	}
	if _, err := e.eng.cli.NetworkCreate(ctx, netName, network.CreateOptions{Driver: "bridge"}); err != nil {
		return nil, fmt.Errorf("create network: %w", err)
	}
	if err := e.startGantry(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "docker test environment ready in %v (web %s, api %s)\n", time.Since(start).Round(time.Millisecond), e.web, e.api)
	return e, nil
}

// buildImageContexts compiles the static binaries the images hold.
func buildImageContexts(dir string) error {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return err
	}
	builds := []struct{ pkg, ctx, out string }{
		{"./cmd/whoami", "ctx-whoami", "whoami"},
		{"./integration/docker/probe", "ctx-whoami", "probe"},
		{"./cmd/gantry", "ctx-gantry", "gantry"},
	}
	for _, b := range builds {
		cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, b.ctx, b.out), b.pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
		}
	}
	return nil
}

// startGantry runs Gantry as a container on the test network, with the
// engine's socket directory mounted read-only and its web (80) and API (8080)
// entrypoints published on 127.0.0.1.
func (e *env) startGantry(ctx context.Context) error {
	cfg := &container.Config{
		Image: gantryImage,
		Cmd: []string{
			"--entryPoints.web.address=:80",
			"--entryPoints.redis.address=:6379",
			"--api.insecure=true",
			"--providers.docker.endpoint=unix://" + sockMountDir + "/docker.sock",
			// Dynamic entrypoints (dynep_test.go): containers may open
			// 8000-8009 inside Gantry's network namespace.
			"--dynamicEntryPoints.allowed=" + dynAllowed,
			"--dynamicEntryPoints.template.transport.lifeCycle.graceTimeOut=" + dynGrace.String(),
			"--log.level=DEBUG",
		},
		ExposedPorts: nat.PortSet{"80/tcp": {}, "8080/tcp": {}, "6379/tcp": {}},
	}
	hc := &container.HostConfig{
		NetworkMode: netName,
		Binds:       []string{e.eng.runDir() + ":" + sockMountDir + ":ro"},
		PortBindings: nat.PortMap{
			"80/tcp":   {{HostIP: "127.0.0.1"}},
			"8080/tcp": {{HostIP: "127.0.0.1"}},
			"6379/tcp": {{HostIP: "127.0.0.1"}},
		},
	}
	r, err := e.eng.cli.ContainerCreate(ctx, cfg, hc, nil, nil, gantryName)
	if err != nil {
		return fmt.Errorf("create gantry container: %w", err)
	}
	if err := e.eng.cli.ContainerStart(ctx, r.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("start gantry container: %w", err)
	}
	in, err := e.eng.cli.ContainerInspect(ctx, r.ID)
	if err != nil {
		return err
	}
	e.gantryPID = in.State.Pid
	hostPort := func(p nat.Port) string {
		bs := in.NetworkSettings.Ports[p]
		if len(bs) == 0 {
			return ""
		}
		return net.JoinHostPort("127.0.0.1", bs[0].HostPort)
	}
	e.web, e.api, e.redis = hostPort("80/tcp"), hostPort("8080/tcp"), hostPort("6379/tcp")
	if e.web == "" || e.api == "" {
		return fmt.Errorf("gantry ports not published: %v", in.NetworkSettings.Ports)
	}
	return harness.Poll(60*time.Second, func() error {
		_, err := harness.Get("http://" + e.api + "/api/overview")
		return err
	})
}

// teardown removes every container, stops the engine and deletes its files.
func teardown() error {
	if shared == nil {
		if baseDir != "" {
			os.RemoveAll(baseDir)
		}
		return nil
	}
	e := shared.eng
	if e.cmd == nil { // stopped by a failed outage test: bring it back to clean up
		if err := e.start(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cs, err := e.cli.ContainerList(ctx, container.ListOptions{All: true})
	if err != nil {
		return err
	}
	for _, c := range cs {
		if err := e.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			return err
		}
	}
	if err := e.stop(); err != nil {
		return err
	}
	e.cli.Close()
	if err := e.unmountAll(); err != nil {
		return err
	}
	return os.RemoveAll(baseDir)
}

// whoami describes one test container.
type whoami struct {
	name     string
	labels   map[string]string
	network  string // default netName
	health   *container.HealthConfig
	publish  bool // publish port 80 on 127.0.0.1 (to drive /health directly)
	noStart  bool
	hostPort string // set when publish
}

// run creates (and unless noStart, starts) a whoami container named w.name
// answering "Name: <w.name>", removed when the test ends. It returns the
// container ID.
func (e *env) run(t *testing.T, w *whoami) string {
	t.Helper()
	ctx := context.Background()
	labels := maps.Clone(w.labels)
	cfg := &container.Config{Image: whoamiImage, Cmd: []string{"--name", w.name}, Labels: labels, Healthcheck: w.health}
	nw := w.network
	if nw == "" {
		nw = netName
	}
	hc := &container.HostConfig{NetworkMode: container.NetworkMode(nw)}
	if w.publish {
		hc.PortBindings = nat.PortMap{"80/tcp": {{HostIP: "127.0.0.1"}}}
	}
	r, err := e.eng.cli.ContainerCreate(ctx, cfg, hc, nil, nil, w.name)
	if err != nil {
		t.Fatalf("create %s: %v", w.name, err)
	}
	t.Cleanup(func() {
		if e.eng.cmd != nil {
			e.eng.cli.ContainerRemove(context.Background(), r.ID, container.RemoveOptions{Force: true})
		}
	})
	if w.noStart {
		return r.ID
	}
	if err := e.eng.cli.ContainerStart(ctx, r.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start %s: %v", w.name, err)
	}
	if w.publish {
		in, err := e.eng.cli.ContainerInspect(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		w.hostPort = "127.0.0.1:" + in.NetworkSettings.Ports["80/tcp"][0].HostPort
	}
	return r.ID
}

// ip returns the container's address on netName.
func (e *env) ip(t *testing.T, id string) string {
	t.Helper()
	in, err := e.eng.cli.ContainerInspect(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if ep := in.NetworkSettings.Networks[netName]; ep != nil {
		return ep.IPAddress
	}
	return ""
}

// rule returns the router label for host on router name.
func rule(name, host string) map[string]string {
	return map[string]string{"gantry.http.routers." + name + ".rule": "Host(`" + host + "`)"}
}

// url is the web entrypoint URL of path.
func (e *env) url(path string) string { return "http://" + e.web + path }

func itoa(i int) string { return strconv.Itoa(i) }
