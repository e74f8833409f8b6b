// Package cluster tests several Gantry processes behaving as one proxy:
// state shared through Redis (rateLimit.redis).
package cluster

import (
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// wait is the polling budget of most conditions (the machine is shared).
const wait = 30 * time.Second

// tool returns the path of a Debian tool, or stops the test (a failure
// under CI) when it is missing.
func tool(t *testing.T, name string) string {
	t.Helper()
	for _, dir := range []string{"", "/usr/sbin/", "/usr/bin/"} {
		if p, err := exec.LookPath(dir + name); err == nil {
			return p
		}
	}
	harness.MissingTool(t, name+" not installed (run scripts/setup/redis.sh)")
	return ""
}

// startRedis starts a throwaway redis-server on addr (no persistence).
func startRedis(t *testing.T, addr string) *harness.Process {
	t.Helper()
	_, port, _ := cutPort(addr)
	p := harness.StartProcess(t, "redis-server", t.TempDir(), tool(t, "redis-server"),
		[]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"}, nil)
	harness.WaitListening(t, wait, addr)
	return p
}

func cutPort(addr string) (string, string, error) { return net.SplitHostPort(addr) }
