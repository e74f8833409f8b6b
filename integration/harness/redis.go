package harness

import (
	"net"
	"os/exec"
	"testing"
	"time"
)

// DebianTool returns the path of a tool a Debian package installs: from
// $PATH, /usr/sbin, /usr/bin, /usr/local/bin or one of dirs (each ending
// in "/"), else MissingTool naming the setup script that installs it.
func DebianTool(t testing.TB, name, setup string, dirs ...string) string {
	t.Helper()
	for _, dir := range append([]string{"", "/usr/sbin/", "/usr/bin/", "/usr/local/bin/"}, dirs...) {
		if p, err := exec.LookPath(dir + name); err == nil {
			return p
		}
	}
	MissingTool(t, name+" not installed (run "+setup+")")
	return ""
}

// StartRedis runs a throwaway Debian redis-server (no persistence) on
// addr ("127.0.0.1:port"), stopped when t ends, and returns once it
// listens (at most 30 s); setup names the script that installs it.
func StartRedis(t testing.TB, addr, setup string) *Process {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("redis address %q: %v", addr, err)
	}
	p := StartProcess(t, "redis-server", t.TempDir(), DebianTool(t, "redis-server", setup),
		[]string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"}, nil)
	WaitListening(t, 30*time.Second, addr)
	return p
}
