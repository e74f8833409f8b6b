package tcpudp

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

const poll = 60 * time.Second

// redisSetup installs the Debian tools of this suite.
const redisSetup = "scripts/setup/tcpudp.sh"

// tool returns the path of a Debian tool or fails (CI) / skips.
func tool(t *testing.T, name string) string {
	t.Helper()
	return harness.DebianTool(t, name, redisSetup, "/usr/lib/postgresql/15/bin/")
}

// start runs a background process for the test's lifetime.
func start(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, name, args...)
	// Its own process group, killed whole: runuser's child (postgres)
	// must not outlive the test or hold the output pipe open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(name), out.String())
		}
	})
	return cmd
}

// run runs a command to completion with a timeout and returns its output.
func run(t *testing.T, stdin string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gantry starts gantry with extra entrypoints (YAML lines under
// entryPoints) and the file provider on a directory holding dynamic.yml;
// extra holds more top-level static YAML.
func gantry(t *testing.T, entryPoints, dynamic string, extra ...string) (*harness.Gantry, string) {
	t.Helper()
	dir := t.TempDir()
	dyn := filepath.Join(dir, "dyn")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dyn, "dynamic.yml", dynamic)
	static := fmt.Sprintf(`entryPoints:
%s
providers:
  providersThrottleDuration: 10ms
  file:
    directory: %q
store:
  path: %q
log:
  level: DEBUG
%s
`, entryPoints, dyn, filepath.Join(dir, "gantry.db"), strings.Join(extra, "\n"))
	g := harness.StartWith(t, harness.Options{Static: static, Dir: dir})
	return g, dyn
}

// freeUDP returns a free loopback UDP address.
func freeUDP(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().String()
}

// freeUDPAndTCP is a 127.0.0.1 address whose port is free for both UDP
// and TCP, below the kernel's ephemeral range (32768-60999 here): for a
// server that binds both (dnsmasq), where a UDP-only pick can find the TCP
// port taken by another test's outgoing connection.
func freeUDPAndTCP(t *testing.T) string {
	t.Helper()
	for range 1000 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			continue
		}
		l, err := net.Listen("tcp", addr)
		u.Close()
		if err != nil {
			continue
		}
		l.Close()
		return addr
	}
	t.Fatal("no port free for both UDP and TCP in 20000-31999")
	return ""
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
