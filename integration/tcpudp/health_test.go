package tcpudp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// A TCP health check (Traefik 3.6: send, expect) takes a server that
// accepts connections but answers wrongly out of rotation: every redis-cli
// PING through Gantry reaches the real redis-server, none the impostor.
func TestTCPHealthCheck(t *testing.T) {
	cli, socat := tool(t, "redis-cli"), tool(t, "socat")
	good := harness.FreeAddr(t)
	harness.StartRedis(t, good, redisSetup)
	bad := harness.FreeAddr(t)
	start(t, socat, "TCP-LISTEN:"+port(bad)+",bind=127.0.0.1,reuseaddr,fork", "SYSTEM:echo -ERR impostor")
	harness.WaitListening(t, 60*time.Second, good, bad)
	ep := harness.FreeAddr(t)
	_, _ = gantry(t, fmt.Sprintf("  redis:\n    address: %q", ep), fmt.Sprintf(`tcp:
  routers:
    redis:
      rule: HostSNI(`+"`*`"+`)
      service: redis
  services:
    redis:
      loadBalancer:
        servers:
          - address: %q
          - address: %q
        healthCheck:
          send: "PING\r\n"
          expect: "+PONG"
          interval: 200ms
          timeout: 1s
`, bad, good))
	harness.Try(t, poll, func() error {
		for i := range 6 {
			out, err := run(t, "", cli, "-h", "127.0.0.1", "-p", port(ep), "PING")
			if err != nil || strings.TrimSpace(out) != "PONG" {
				return fmt.Errorf("ping %d: %v %q", i, err, out)
			}
		}
		return nil
	})
}
