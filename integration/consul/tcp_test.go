package consul

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// redisCLI runs redis-cli against addr with args, bounded to 10 s.
func redisCLI(cli, addr string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, p, _ := net.SplitHostPort(addr)
	out, err := exec.CommandContext(ctx, cli, append([]string{"-h", h, "-p", p}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Issue 14: a TCP router from Consul catalog tags (traefik.tcp.*) of a
// service registered with a real agent, carrying real traffic: redis-cli
// reaches Debian's redis-server through Gantry's HostSNI(`*`) router, the
// API lists the router and its implicit service (the Consul service name,
// its registered address and port), and deregistering the service stops
// the routing.
func TestTCPRouterFromCatalogTags(t *testing.T) {
	cli := harness.DebianTool(t, "redis-cli", "scripts/setup/tcpudp.sh")
	a := startAgent(t)
	backend := harness.FreeAddr(t)
	harness.StartRedis(t, backend, "scripts/setup/tcpudp.sh")
	_, bport, _ := net.SplitHostPort(backend)
	ep, api := harness.FreeAddr(t), harness.FreeAddr(t)
	harness.Start(t, fmt.Sprintf(`
entryPoints:
  redis:
    address: %q
  traefik:
    address: %q
api:
  insecure: true
providers:
  providersThrottleDuration: 50ms
  consulCatalog:
    exposedByDefault: false
    endpoint:
      address: %q
      endpointWaitTime: 5s
log:
  level: DEBUG
`, ep, api, a.Addr))

	n, _ := strconv.Atoi(bport)
	a.register(t, registerOpts{id: "cache-1", name: "cache", addr: "127.0.0.1", port: n, ttl: true, tags: []string{
		"traefik.enable=true",
		"traefik.tcp.routers.cache.entrypoints=redis",
		"traefik.tcp.routers.cache.rule=HostSNI(`*`)",
	}})
	harness.Try(t, e2eTimeout, func() error {
		out, err := redisCLI(cli, ep, "SET", "k", "via-consul")
		if err != nil || out != "OK" {
			return fmt.Errorf("redis-cli SET through gantry: %v %q", err, out)
		}
		return nil
	})
	// The value is in the real server, read directly.
	if out, err := redisCLI(cli, backend, "GET", "k"); err != nil || out != "via-consul" {
		t.Fatalf("GET from redis-server directly: %v %q", err, out)
	}
	harness.TryGet(t, 60*time.Second, "http://"+api+"/api/tcp/routers/cache@consulcatalog", harness.StatusIs(200),
		harness.BodyContains(`"service":"cache@consulcatalog"`), harness.BodyContains(`"status":"enabled"`))
	harness.TryGet(t, 60*time.Second, "http://"+api+"/api/tcp/services/cache@consulcatalog", harness.StatusIs(200),
		harness.BodyContains(`"address":"`+backend+`"`))

	a.deregister(t, "cache-1")
	harness.Try(t, e2eTimeout, func() error {
		if out, err := redisCLI(cli, ep, "PING"); err == nil && out == "PONG" {
			return fmt.Errorf("still routed after deregistration: %q", out)
		}
		return nil
	})
	harness.TryGet(t, 60*time.Second, "http://"+api+"/api/tcp/routers/cache@consulcatalog", harness.StatusIs(404))
}
