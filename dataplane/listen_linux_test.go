//go:build linux

package dataplane

import (
	"context"
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAcceptedKeepAlive: a connection accepted on an entrypoint's
// listener, opened by Gantry or inherited from a binary upgrade, has
// keep-alive probes after 15s idle, 15s apart (set once on the listener
// and inherited by the accepted socket, not per accept).
func TestAcceptedKeepAlive(t *testing.T) {
	fresh, err := listenConfig().Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	inherited, err := net.Listen("tcp", "127.0.0.1:0") // a parent's socket without the options
	if err != nil {
		t.Fatal(err)
	}
	defer inherited.Close()
	if err := inheritKeepAlive(inherited); err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]net.Listener{"fresh": fresh, "inherited": inherited} {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		a, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		rc, err := a.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var on, idle, intvl int
		var gerr error
		if err := rc.Control(func(fd uintptr) {
			on, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
			if gerr == nil {
				idle, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
			}
			if gerr == nil {
				intvl, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_KEEPINTVL)
			}
		}); err != nil || gerr != nil {
			t.Fatal(err, gerr)
		}
		if on != 1 || idle != 15 || intvl != 15 {
			t.Errorf("%s listener: accepted connection has SO_KEEPALIVE %d, TCP_KEEPIDLE %d s, TCP_KEEPINTVL %d s; want 1, 15, 15", name, on, idle, intvl)
		}
	}
}
