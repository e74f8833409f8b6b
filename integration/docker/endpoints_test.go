package docker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/go-connections/nat"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// providers.docker.endpoints (traefik/traefik#182) with two real dockerds:
// the suite's engine (a) and a second one started here with its own data
// root and socket (b). A container named the same on both is routed on
// each under its qualified name, reached through its published port on
// the endpoint's hostAddress. Engine b stopped: its route is kept and a
// problem is shown while a keeps updating; b back: the problem goes.
func TestTwoDockerEngines(t *testing.T) {
	e := getEnv(t)
	ctx := context.Background()
	b := &engine{dir: filepath.Join(baseDir, "b")}
	if err := b.start(); err != nil {
		t.Fatalf("second dockerd: %v", err)
	}
	t.Cleanup(func() {
		if b.cmd == nil {
			_ = b.start()
		}
		if cs, err := b.cli.ContainerList(context.Background(), container.ListOptions{All: true}); err == nil {
			for _, c := range cs {
				_ = b.cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
			}
		}
		// dockerd leaves a network's bridge on the host when it stops.
		_ = b.cli.NetworkRemove(context.Background(), netName)
		_ = b.stop()
		b.cli.Close()
		_ = b.unmountAll()
		if b.logf != nil {
			b.logf.Close()
		}
		_ = os.RemoveAll(b.dir)
	})
	dockerfile, err := filepath.Abs(filepath.Join("testdata", "whoami.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.docker(ctx, "build", "-q", "-t", whoamiImage, "-f", dockerfile, filepath.Join(baseDir, "ctx-whoami")); err != nil {
		t.Fatal(err)
	}
	// A subnet of its own: the two engines' bridges must not overlap.
	subnet := fmt.Sprintf("10.231.%d.0/24", 1+rand.IntN(250))
	if _, err := b.cli.NetworkCreate(ctx, netName, network.CreateOptions{Driver: "bridge",
		IPAM: &network.IPAM{Config: []network.IPAMConfig{{Subnet: subnet}}}}); err != nil {
		t.Fatal(err)
	}
	runOn := func(eng *engine, name, answer, hostPort string) {
		t.Helper()
		cfg := &container.Config{Image: whoamiImage, Cmd: []string{"--name", answer}, Labels: map[string]string{"gantry.enable": "true"}}
		hc := &container.HostConfig{NetworkMode: netName, PortBindings: nat.PortMap{"80/tcp": {{HostIP: "127.0.0.1", HostPort: hostPort}}}}
		r, err := eng.cli.ContainerCreate(ctx, cfg, hc, nil, nil, name)
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		t.Cleanup(func() {
			if eng.cmd != nil {
				eng.cli.ContainerRemove(context.Background(), r.ID, container.RemoveOptions{Force: true})
			}
		})
		if err := eng.cli.ContainerStart(ctx, r.ID, container.StartOptions{}); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
	}
	runOn(e.eng, "twin", "twin-on-a", "")
	runOn(b, "twin", "twin-on-b", "")

	web := harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: %q
providers:
  docker:
    exposedByDefault: false
    endpoints:
      - name: a
        endpoint: %q
        hostAddress: 127.0.0.1
      - name: b
        endpoint: %q
        hostAddress: 127.0.0.1
`, web, e.eng.host(), b.host()))
	url := "http://" + web + "/"
	harness.TryGet(t, wait, url, harness.Host("twin-a"), harness.StatusIs(200), harness.BodyContains("Name: twin-on-a"))
	harness.TryGet(t, wait, url, harness.Host("twin-b"), harness.StatusIs(200), harness.BodyContains("Name: twin-on-b"))

	// b stopped: a problem names it; its route stays (no 404); a updates.
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	g.WaitOutput(t, wait, "docker endpoint b")
	r, err := harness.Get(url, harness.Host("twin-b"))
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode == 404 {
		t.Fatalf("b down: twin-b answered 404: its route was dropped")
	}
	// A port of its own: a random one could be the port b's proxy released.
	runOn(e.eng, "later", "later-on-a", strconv.Itoa(harness.FreePort(t)))
	harness.TryGet(t, wait, url, harness.Host("later-a"), harness.StatusIs(200), harness.BodyContains("Name: later-on-a"))

	// b back: reconnected, the problem resolved, twin-b served.
	if err := b.start(); err != nil {
		t.Fatal(err)
	}
	harness.TryGet(t, 2*wait, url, harness.Host("twin-b"), harness.StatusIs(200), harness.BodyContains("Name: twin-on-b"))
	harness.Try(t, wait, func() error {
		last := ""
		for line := range strings.Lines(g.Output()) {
			if strings.Contains(line, "docker endpoint b") {
				last = line
			}
		}
		if !strings.Contains(last, "problem resolved") {
			return fmt.Errorf("problem of endpoint b not resolved yet (last: %s)", last)
		}
		return nil
	})
}
