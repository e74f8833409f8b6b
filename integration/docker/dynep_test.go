package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Gantry's static dynamicEntryPoints in the suite (main_test.go).
const (
	dynAllowed = "8000-8009"
	dynGrace   = 10 * time.Second
)

// netnsRefused reports whether a TCP connection to addr inside Gantry's
// network namespace is refused (nothing bound there).
func (e *env) netnsRefused(addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := dialInNetns(ctx, e.gantryPID, addr)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// netnsGet GETs url from inside Gantry's network namespace.
func (e *env) netnsGet(url string) (int, string, error) {
	resp, err := netnsClient(e.gantryPID).Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// Dynamic entrypoints with a real dockerd and Gantry in a container
// (issue 18, traefik/traefik#6551): a container's
// gantry.entrypoints.<name>.address inside dynamicEntryPoints.allowed gets
// a listener and the router naming it answers through it; one outside the
// allow-list is a problem naming the container and label, and its port is
// not bound; once the container asking is removed, the listener stops
// accepting while a request in flight on it completes, and stays closed.
func TestDockerDynamicEntryPoints(t *testing.T) {
	e := getEnv(t)
	const addr = "127.0.0.1:8001"
	if !e.netnsRefused(addr) {
		t.Fatalf("%s listens before any container asks for it", addr)
	}
	// The router lives on one container, the request for the listener on
	// another, so the listener can go while the router's server stays up.
	e.run(t, &whoami{name: "dyn-app", labels: map[string]string{
		"gantry.http.routers.dynapp.rule":        "PathPrefix(`/`)",
		"gantry.http.routers.dynapp.entrypoints": "dynapp",
	}})
	asker := e.run(t, &whoami{name: "dyn-port", labels: map[string]string{
		"gantry.entrypoints.dynapp.address": ":8001",
	}})
	harness.Try(t, wait, func() error {
		code, body, err := e.netnsGet("http://" + addr + "/")
		if err != nil || code != 200 || !strings.Contains(body, "Name: dyn-app") {
			return fmt.Errorf("GET through the dynamic entrypoint: %d %.200q %v", code, body, err)
		}
		return nil
	})
	// The router is on dynapp only: not on web, which it does not name.
	if r, err := harness.Get(e.url("/"), harness.Host("dyn-app.unrouted.test")); err != nil || r.StatusCode != 404 {
		t.Errorf("router dynapp answers on web: %v %v", r, err)
	}

	// The use case of traefik/traefik#6551: a stack's Redis asks for its
	// own port and is routed there by a TCP router (HostSNI(`*`)).
	if e.redisImage {
		ctx := context.Background()
		r, err := e.eng.cli.ContainerCreate(ctx, &container.Config{Image: redisImage, Labels: map[string]string{
			"com.docker.compose.project":                "shop",
			"com.docker.compose.service":                "cache",
			"gantry.entrypoints.shop-redis.address":     ":8002",
			"traefik.tcp.routers.shopcache.entrypoints": "shop-redis",
			"traefik.tcp.routers.shopcache.rule":        "HostSNI(`*`)",
		}}, &container.HostConfig{NetworkMode: netName}, nil, nil, "shop-cache-1")
		if err != nil {
			t.Fatalf("create redis: %v", err)
		}
		t.Cleanup(func() { e.eng.cli.ContainerRemove(context.Background(), r.ID, container.RemoveOptions{Force: true}) })
		if err := e.eng.cli.ContainerStart(ctx, r.ID, container.StartOptions{}); err != nil {
			t.Fatalf("start redis: %v", err)
		}
		harness.Try(t, wait, func() error {
			dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			c, err := dialInNetns(dctx, e.gantryPID, "127.0.0.1:8002")
			if err != nil {
				return err
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(3 * time.Second))
			if _, err := io.WriteString(c, "PING\r\n"); err != nil {
				return err
			}
			buf := make([]byte, 16)
			n, err := c.Read(buf)
			if err != nil || string(buf[:n]) != "+PONG\r\n" {
				return fmt.Errorf("redis PING through the dynamic entrypoint: %q %v", buf[:n], err)
			}
			return nil
		})
	} else {
		harness.MissingTool(t, "redis-server not installed: run scripts/setup/tcpudp.sh")
	}

	e.run(t, &whoami{name: "dyn-evil", labels: map[string]string{
		"gantry.entrypoints.evil.address": ":9001",
	}})
	harness.TryGet(t, wait, "http://"+e.api+"/api/problems", harness.StatusIs(200),
		harness.BodyContains(`"source":"container dyn-evil label gantry.entrypoints.evil.address"`),
		harness.BodyContains(`entrypoint evil: address \":9001\" is outside dynamicEntryPoints.allowed (8000-8009); not opened`))
	if !e.netnsRefused("127.0.0.1:9001") {
		t.Error("the port outside the allow-list is bound")
	}

	// Removal: a request in flight (the server answers after 4s) when the
	// container asking goes away completes; new connections are refused.
	type result struct {
		code int
		body string
		err  error
	}
	inflight := make(chan result, 1)
	go func() {
		code, body, err := e.netnsGet("http://" + addr + "/?wait=4s")
		inflight <- result{code, body, err}
	}()
	time.Sleep(500 * time.Millisecond)
	removed := time.Now()
	if err := e.eng.cli.ContainerRemove(context.Background(), asker, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	harness.Try(t, wait, func() error {
		if !e.netnsRefused(addr) {
			return errors.New("the dynamic entrypoint still accepts after its container was removed")
		}
		return nil
	})
	t.Logf("listener closed %v after the container was removed", time.Since(removed).Round(10*time.Millisecond))
	select {
	case r := <-inflight:
		t.Fatalf("the slow request ended before the listener closed (%d %v): the test proves nothing", r.code, r.err)
	default:
	}
	select {
	case r := <-inflight:
		if r.err != nil || r.code != 200 || !strings.Contains(r.body, "Name: dyn-app") {
			t.Errorf("request in flight during the removal: %d %.200q %v, want 200 from dyn-app", r.code, r.body, r.err)
		}
	case <-time.After(dynGrace + 5*time.Second):
		t.Fatal("request in flight during the removal never answered")
	}
	if !e.netnsRefused(addr) {
		t.Error("the dynamic entrypoint accepts again after its drain")
	}
	harness.TryGet(t, wait, "http://"+e.api+"/api/http/routers/dynapp@docker", harness.StatusIs(200), harness.BodyContains(`"status":"disabled"`))
}
