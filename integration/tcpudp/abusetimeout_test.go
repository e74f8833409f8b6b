package tcpudp

import (
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// silent returns a server that sends 64 KiB (so that Gantry's copy of
// that direction has moved on to splicing), reads to the client's end of
// stream and then neither sends nor closes until the test ends.
func silent(t *testing.T) string {
	t.Helper()
	hold := make(chan struct{})
	addr := startBackend(t, "127.0.0.1:0", func(c *net.TCPConn) {
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		if _, err := c.Write(make([]byte, 64<<10)); err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, c)
		<-hold
	})
	t.Cleanup(func() { close(hold) }) // before startBackend's cleanup waits
	return addr
}

// A stuck connection on the raw path is still cut: by the
// serversTransport's terminationDelay once the client half-closed (and not
// before), and by the entrypoint's graceTimeOut when Gantry stops.
func TestTCPAbuseTimeouts(t *testing.T) {
	r := startAbuse(t,
		abuseRoute{name: "delay", server: silent(t), transport: "{terminationDelay: 200ms}"},
		abuseRoute{name: "grace", server: silent(t)},
	)
	open := func(t *testing.T, name string) *net.TCPConn {
		t.Helper()
		c, err := dialGantry(r.ep[name])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.ReadFull(c, make([]byte, 64<<10)); err != nil {
			t.Fatalf("the server's first 64 KiB: %v", err)
		}
		return c
	}
	t.Run("terminationDelay after a half-close", func(t *testing.T) {
		c := open(t, "delay")
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		if n, err := c.Read(make([]byte, 1)); !os.IsTimeout(err) {
			t.Fatalf("before the half-close: read %d bytes, %v; want the connection kept open", n, err)
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		if err := c.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		if err := ends(c); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("graceTimeOut at shutdown", func(t *testing.T) {
		c := open(t, "grace")
		if code := r.g.Stop(t); code != 0 {
			t.Errorf("gantry exited with code %d, want 0 after the grace period", code)
		}
		if err := ends(c); err != nil {
			t.Fatal(err)
		}
	})
}
