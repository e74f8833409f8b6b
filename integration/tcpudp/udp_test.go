package tcpudp

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func udpRouter(ep, backend string) string {
	return fmt.Sprintf(`udp:
  routers:
    echo:
      entryPoints: [%s]
      service: echo
  services:
    echo:
      loadBalancer:
        servers:
          - address: %q
`, ep, backend)
}

// A socat UDP echo behind a UDP router: the first datagram of a session is
// answered (never lost while the session is set up), later ones ride the
// same session, and replies come from the address the client sent to.
func TestUDPEchoThroughRouter(t *testing.T) {
	socat := tool(t, "socat")
	backend := freeUDP(t)
	start(t, socat, "-b", "65535", "UDP-RECVFROM:"+port(backend)+",bind=127.0.0.1,fork", "EXEC:cat")
	ep := freeUDP(t)
	g, _ := gantry(t, fmt.Sprintf("  web:\n    address: %q\n  udp:\n    address: %q\n    udp:\n      timeout: 2s", harness.FreeAddr(t), ep+"/udp"), udpRouter("udp", backend))
	_ = g
	c, err := net.Dial("udp", ep)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 9000)
	harness.Try(t, poll, func() error {
		_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err := c.Write([]byte("first")); err != nil {
			return err
		}
		n, err := c.Read(buf)
		if err != nil || string(buf[:n]) != "first" {
			return fmt.Errorf("echo: %q %v", buf[:n], err)
		}
		return nil
	})
	// A 9000-byte datagram passes whole.
	big := strings.Repeat("x", 9000)
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte(big)); err != nil {
		t.Fatal(err)
	}
	n, err := c.Read(buf)
	if err != nil || n != 9000 {
		t.Fatalf("big datagram: %d bytes, %v", n, err)
	}
	// A fresh client's very first datagram is answered on the first try.
	c2, err := net.Dial("udp", ep)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_ = c2.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c2.Write([]byte("only-one")); err != nil {
		t.Fatal(err)
	}
	if n, err := c2.Read(buf); err != nil || string(buf[:n]) != "only-one" {
		t.Fatalf("first datagram of a new session: %q %v", buf[:n], err)
	}
}

// dnsmasq answers dig through a UDP router.
func TestDNSThroughUDPRouter(t *testing.T) {
	dnsmasq, dig := tool(t, "dnsmasq"), tool(t, "dig")
	backend := freeUDPAndTCP(t) // dnsmasq listens on both
	start(t, dnsmasq, "--no-daemon", "--no-resolv", "--no-hosts", "--bind-interfaces", "--listen-address=127.0.0.1",
		"--port="+port(backend), "--address=/gantry.test/192.0.2.77", "--user=root", "--pid-file=")
	ep := freeUDP(t)
	_, _ = gantry(t, fmt.Sprintf("  web:\n    address: %q\n  dns:\n    address: %q", harness.FreeAddr(t), ep+"/udp"), udpRouter("dns", backend))
	harness.Try(t, poll, func() error {
		out, err := run(t, "", dig, "@127.0.0.1", "-p", port(ep), "+short", "+tries=1", "+time=1", "gantry.test", "A")
		if err != nil || strings.TrimSpace(out) != "192.0.2.77" {
			return fmt.Errorf("dig: %v %q", err, out)
		}
		return nil
	})
}

// On a wildcard UDP entrypoint, the reply leaves from the address the
// client sent to (127.0.0.2 here, not the kernel's choice 127.0.0.1;
// Traefik issue 7430, case 046).
func TestUDPReplyFromAddressUsed(t *testing.T) {
	socat := tool(t, "socat")
	backend := freeUDP(t)
	start(t, socat, "UDP-RECVFROM:"+port(backend)+",bind=127.0.0.1,fork", "EXEC:cat")
	p := port(freeUDP(t))
	_, _ = gantry(t, fmt.Sprintf("  web:\n    address: %q\n  udp:\n    address: \":%s/udp\"", harness.FreeAddr(t), p), udpRouter("udp", backend))
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: mustAtoi(t, p)}
	buf := make([]byte, 64)
	harness.Try(t, poll, func() error {
		_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err := c.WriteToUDP([]byte("who"), to); err != nil {
			return err
		}
		n, from, err := c.ReadFromUDP(buf)
		if err != nil {
			return err
		}
		if string(buf[:n]) != "who" || !from.IP.Equal(to.IP) {
			return fmt.Errorf("reply %q from %v, want from %v", buf[:n], from, to)
		}
		return nil
	})
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// startPidEcho runs a UDP backend on addr that answers each line with the
// pid of the socat child serving the peer: UDP-LISTEN's fork runs one
// child per peer address (Gantry's upstream socket of a session), so a new
// session shows another pid.
func startPidEcho(t *testing.T, socat, addr string) {
	t.Helper()
	start(t, socat, "UDP-LISTEN:"+port(addr)+",bind=127.0.0.1,fork,reuseaddr", "SYSTEM:while read l; do echo $$; done")
}

// udpSession dials ep and returns ask (one "x\n" datagram sent, the reply
// read within 10 s, trimmed: a new session forks a socat child and a shell,
// slow on a loaded machine) and the first answer, waited for (poll).
func udpSession(t *testing.T, ep string) (ask func() (string, error), first string) {
	t.Helper()
	c, err := net.Dial("udp", ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	buf := make([]byte, 64)
	ask = func() (string, error) {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte("x\n")); err != nil {
			return "", err
		}
		n, err := c.Read(buf)
		return strings.TrimSpace(string(buf[:n])), err
	}
	harness.Try(t, poll, func() error {
		var err error
		first, err = ask()
		return err
	})
	return ask, first
}

// The session idle timeout (udp.timeout): datagrams closer together than
// the timeout stay on one session (one upstream socket, so one socat
// child, whose pid is the reply); after a longer pause the client gets a
// new session.
func TestUDPSessionIdleTimeout(t *testing.T) {
	socat := tool(t, "socat")
	backend := freeUDP(t)
	startPidEcho(t, socat, backend)
	ep := freeUDP(t)
	// Seconds, not fractions: a reply on a loaded machine can take a good
	// part of one, and the pauses must stay well short of the timeout.
	_, _ = gantry(t, fmt.Sprintf("  web:\n    address: %q\n  udp:\n    address: %q\n    udp:\n      timeout: 3s", harness.FreeAddr(t), ep+"/udp"), udpRouter("udp", backend))
	ask, first := udpSession(t, ep)
	for range 4 { // 4 × 1s: past the timeout in total, never idle for it
		time.Sleep(time.Second)
		if got, err := ask(); err != nil || got != first {
			t.Fatalf("within the timeout: %q %v, want the same session %q", got, err, first)
		}
	}
	time.Sleep(4500 * time.Millisecond)
	got, err := ask()
	if err != nil {
		t.Fatalf("after the timeout: %v (the first datagram of a new session must be answered)", err)
	}
	if got == first {
		t.Fatalf("after 4.5s idle with a 3s timeout the session was kept (%s)", got)
	}
}
