package tcpudp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// redis-cli reaches redis-server through a HostSNI(`*`) TCP router on a
// plain entrypoint, while the same entrypoint... (a dedicated one here):
// the connection is routed before the client speaks.
func TestRedisThroughHostSNIStar(t *testing.T) {
	cli := tool(t, "redis-cli")
	raddr := harness.FreeAddr(t)
	harness.StartRedis(t, raddr, redisSetup)
	ep := harness.FreeAddr(t)
	g, _ := gantry(t, fmt.Sprintf("  redis:\n    address: %q", ep), fmt.Sprintf(`tcp:
  routers:
    redis:
      entryPoints: [redis]
      rule: HostSNI(`+"`*`"+`)
      service: redis
  services:
    redis:
      loadBalancer:
        servers:
          - address: %q
`, raddr))
	_ = g
	harness.Try(t, poll, func() error {
		out, err := run(t, "", cli, "-h", "127.0.0.1", "-p", port(ep), "SET", "k", "through-gantry")
		if err != nil || !strings.Contains(out, "OK") {
			return fmt.Errorf("SET: %v %q", err, out)
		}
		return nil
	})
	out, err := run(t, "", cli, "-h", "127.0.0.1", "-p", port(raddr), "GET", "k")
	if err != nil || strings.TrimSpace(out) != "through-gantry" {
		t.Fatalf("direct GET: %v %q", err, out)
	}
}
