// Package cluster tests several Gantry processes behaving as one proxy:
// state shared through Redis (rateLimit.redis).
package cluster

import (
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// wait is the polling budget of most conditions (the machine is shared).
const wait = 30 * time.Second

// startRedis starts a throwaway redis-server on addr (no persistence).
func startRedis(t *testing.T, addr string) *harness.Process {
	t.Helper()
	return harness.StartRedis(t, addr, "scripts/setup/redis.sh")
}
