//go:build linux

package tcpproxy

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/router/tcpmux"
	"golang.org/x/sys/unix"
)

// keepAliveOpts reads SO_KEEPALIVE, TCP_KEEPIDLE and TCP_KEEPINTVL (s) of
// raw's socket.
func keepAliveOpts(t *testing.T, raw syscall.Conn) (on, idle, intvl int) {
	t.Helper()
	rc, err := raw.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		if on, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE); gerr != nil {
			return
		}
		if idle, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_KEEPIDLE); gerr != nil {
			return
		}
		intvl, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_KEEPINTVL)
	}); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return on, idle, intvl
}

// dialBackend dials a loopback listener with tr and returns the socket.
func dialBackend(t *testing.T, tr *Transport) socket {
	t.Helper()
	back, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { back.Close() })
	conn, raw, err := tr.dial(context.Background(), NewServer(back.Addr().String(), false, 1), &tcpmux.Conn{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if conn != net.Conn(raw) {
		t.Fatal("without TLS the connection is not the socket dial returned")
	}
	return raw
}

// TestDialKeepAliveArmedAfterDelay: with dialKeepAlive 15s the dialled
// socket has no keep-alive at first and SO_KEEPALIVE, TCP_KEEPIDLE 15 and
// TCP_KEEPINTVL 15 once it lived keepAliveDelay.
func TestDialKeepAliveArmedAfterDelay(t *testing.T) {
	tr := &Transport{DialTimeout: 5 * time.Second, DialKeepAlive: 15 * time.Second}
	raw := dialBackend(t, tr)
	if on, _, _ := keepAliveOpts(t, raw); on != 0 {
		t.Fatal("keep-alive set at dial, want it set after keepAliveDelay")
	}
	a := tr.armKeepAlive(raw)
	if a == nil {
		t.Fatal("armKeepAlive returned nil for dialKeepAlive 15s")
	}
	defer a.stop()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		on, idle, intvl := keepAliveOpts(t, raw)
		if on == 1 {
			if idle != 15 || intvl != 15 {
				t.Fatalf("TCP_KEEPIDLE %d s, TCP_KEEPINTVL %d s; want 15, 15", idle, intvl)
			}
			return
		}
		if time.Now().After(end) {
			t.Fatal("keep-alive never set")
		}
	}
}

// TestDialKeepAliveStopped: a connection that ended (stop) before
// keepAliveDelay gets no keep-alive options.
func TestDialKeepAliveStopped(t *testing.T) {
	tr := &Transport{DialTimeout: 5 * time.Second, DialKeepAlive: 15 * time.Second}
	raw := dialBackend(t, tr)
	tr.armKeepAlive(raw).stop()
	time.Sleep(keepAliveDelay + 300*time.Millisecond)
	if on, _, _ := keepAliveOpts(t, raw); on != 0 {
		t.Fatal("keep-alive set after stop")
	}
}

// TestDialKeepAliveShortOrOff: a dialKeepAlive not longer than
// keepAliveDelay is set by the dial itself; a negative one disables
// keep-alive; neither arms a timer.
func TestDialKeepAliveShortOrOff(t *testing.T) {
	for _, c := range []struct {
		d        time.Duration
		on, idle int
	}{{d: time.Second, on: 1, idle: 1}, {d: -1, on: 0}} {
		tr := &Transport{DialTimeout: 5 * time.Second, DialKeepAlive: c.d}
		raw := dialBackend(t, tr)
		on, idle, intvl := keepAliveOpts(t, raw)
		if on != c.on || (c.on == 1 && (idle != c.idle || intvl != c.idle)) {
			t.Errorf("dialKeepAlive %v: SO_KEEPALIVE %d, TCP_KEEPIDLE %d, TCP_KEEPINTVL %d; want %d, %d, %d", c.d, on, idle, intvl, c.on, c.idle, c.idle)
		}
		if a := tr.armKeepAlive(raw); a != nil {
			a.stop()
			t.Errorf("dialKeepAlive %v: armKeepAlive armed a timer", c.d)
		}
	}
}
