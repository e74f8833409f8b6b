package tcpudp

import (
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// echoServer is a TCP echo server (socat, a real part) on a free port.
func echoServer(t *testing.T) string {
	t.Helper()
	socat := tool(t, "socat")
	addr := harness.FreeAddr(t)
	start(t, socat, "TCP-LISTEN:"+port(addr)+",bind=127.0.0.1,reuseaddr,fork", "EXEC:cat")
	harness.WaitListening(t, 60*time.Second, addr)
	return addr
}

func echoConf(entryPoint, router, backend, extra string) string {
	return fmt.Sprintf(`tcp:
  routers:
    %s:
      entryPoints: [%s]
      rule: HostSNI(`+"`*`"+`)
      service: echo
  services:
    echo:
      loadBalancer:
        servers:
          - address: %q
%s`, router, entryPoint, backend, extra)
}

func roundTrip(c net.Conn, msg string) error {
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		return err
	}
	b := make([]byte, len(msg))
	if _, err := io.ReadFull(c, b); err != nil {
		return err
	}
	if string(b) != msg {
		return fmt.Errorf("echo %q, want %q", b, msg)
	}
	return nil
}

// A TCP connection carrying data survives 20 configuration swaps that keep
// its router; when the router is then removed, the connection is closed
// after the entrypoint's grace period (here 1s), not at once.
func TestTCPConnectionSurvivesSwaps(t *testing.T) {
	backend := echoServer(t)
	ep := harness.FreeAddr(t)
	g, dyn := gantry(t, fmt.Sprintf("  echo:\n    address: %q\n    transport:\n      lifeCycle:\n        graceTimeOut: 1s", ep), echoConf("echo", "echo", backend, ""))
	var c net.Conn
	harness.Try(t, poll, func() error {
		var err error
		if c, err = net.Dial("tcp", ep); err != nil {
			return err
		}
		if err := roundTrip(c, "warm-up\n"); err != nil {
			c.Close()
			return err
		}
		return nil
	})
	defer c.Close()
	for i := range 20 {
		before := g.Process.CountOutput("config applied")
		// Each swap changes the configuration (an extra router), keeping "echo".
		extra := fmt.Sprintf("    other%d:\n      loadBalancer:\n        servers:\n          - address: \"127.0.0.1:%d\"\n", i, 1000+i)
		harness.WriteFile(t, dyn, "dynamic.yml", echoConf("echo", "echo", backend, extra))
		waitApplied(t, g, before)
		if err := roundTrip(c, fmt.Sprintf("after swap %d\n", i)); err != nil {
			t.Fatalf("connection broken by swap %d: %v", i, err)
		}
	}
	// Remove the router: the connection lives on for the grace period.
	before := g.Process.CountOutput("config applied")
	removed := time.Now() // the swap happens after this
	harness.WriteFile(t, dyn, "dynamic.yml", echoConf("echo", "renamed", backend, ""))
	waitApplied(t, g, before)
	if err := roundTrip(c, "still here\n"); err != nil && time.Since(removed) < 900*time.Millisecond {
		t.Fatalf("connection closed before the grace period: %v", err)
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Read(make([]byte, 1))
	if err == nil || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("connection of a removed router still open after the grace period: %v", err)
	}
	if d := time.Since(removed); d < time.Second {
		t.Fatalf("closed after %v, before the 1s grace period", d)
	}
}

// A UDP session survives a swap that keeps its router.
func TestUDPSessionSurvivesSwap(t *testing.T) {
	socat := tool(t, "socat")
	backend := freeUDP(t)
	startPidEcho(t, socat, backend)
	ep := freeUDP(t)
	g, dyn := gantry(t, fmt.Sprintf("  web:\n    address: %q\n  udp:\n    address: %q\n    udp:\n      timeout: 10s", harness.FreeAddr(t), ep+"/udp"), udpRouter("udp", backend))
	_ = g
	ask, first := udpSession(t, ep)
	if again, err := ask(); err != nil || again != first {
		t.Fatalf("same session before any swap: %q %v, want %q", again, err, first)
	}
	before := g.Process.CountOutput("config applied")
	harness.WriteFile(t, dyn, "dynamic.yml", udpRouter("udp", backend)+"    unused:\n      loadBalancer:\n        servers:\n          - address: \"127.0.0.1:9\"\n")
	waitApplied(t, g, before)
	// The same session: the same upstream socket, so the same socat child.
	got, err := ask()
	if err != nil || got != first {
		t.Fatalf("after the swap: %q %v, want the session's reply %q", got, err, first)
	}
}

// waitApplied waits until gantry logged more "config applied" lines than
// before.
func waitApplied(t *testing.T, g *harness.Gantry, before int) {
	t.Helper()
	harness.Try(t, poll, func() error {
		if g.Process.CountOutput("config applied") <= before {
			return fmt.Errorf("configuration not applied yet")
		}
		return nil
	})
}
