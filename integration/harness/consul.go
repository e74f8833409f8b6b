package harness

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// ConsulVersion is the agent version scripts/setup/consul.sh builds.
const ConsulVersion = "1.14.8"

// ConsulBin returns the Consul agent binary ($GANTRY_CONSUL_BIN, else the
// setup script's cache under $XDG_CACHE_HOME or $HOME/.cache); a missing
// one is MissingTool.
func ConsulBin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("GANTRY_CONSUL_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("GANTRY_CONSUL_BIN: %v", err)
		}
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		MissingTool(t, fmt.Sprintf("consul agent not built: run scripts/setup/consul.sh (%v)", err))
	}
	p := filepath.Join(cache, "gantry", "consul-"+ConsulVersion, "consul")
	if _, err := os.Stat(p); err != nil {
		MissingTool(t, fmt.Sprintf("consul agent not built: run scripts/setup/consul.sh (looked for $GANTRY_CONSUL_BIN and %s)", p))
	}
	return p
}

// ConsulDevArgs returns the arguments of a -dev agent (in-memory state)
// named node on loopback; ports are its HTTP, Serf LAN, Serf WAN and
// server ports; DNS and gRPC are off.
func ConsulDevArgs(node string, ports [4]int) []string {
	return []string{"agent", "-dev",
		"-bind", "127.0.0.1", "-client", "127.0.0.1", "-node", node,
		"-http-port", strconv.Itoa(ports[0]), "-serf-lan-port", strconv.Itoa(ports[1]),
		"-serf-wan-port", strconv.Itoa(ports[2]), "-server-port", strconv.Itoa(ports[3]),
		"-dns-port", "-1", "-grpc-port", "-1", "-grpc-tls-port", "-1", "-log-level", "warn"}
}

// StartConsul runs a real Consul agent in -dev mode named node on free
// loopback ports (stopped when t ends) and returns its HTTP address
// ("127.0.0.1:port") once it has a leader (at most 60 s).
func StartConsul(t testing.TB, node string) string {
	t.Helper()
	bin := ConsulBin(t)
	ports := [4]int{FreePort(t), FreePort(t), FreePort(t), FreePort(t)}
	StartProcess(t, "consul", t.TempDir(), bin, ConsulDevArgs(node, ports), nil)
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	Try(t, 60*time.Second, func() error {
		resp, err := http.Get("http://" + addr + "/v1/status/leader")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var b [64]byte
		n, _ := resp.Body.Read(b[:])
		if resp.StatusCode != http.StatusOK || n <= 2 {
			return fmt.Errorf("no leader yet (%s %q)", resp.Status, b[:n])
		}
		return nil
	})
	return addr
}
