// Package deaflisten gives tests a loopback TCP address that never
// answers a connect: a listening socket (backlog 0) that never accepts,
// whose accept queue is filled first, so that Linux drops the SYNs of any
// further connect and it stays in progress until the dialer's timeout,
// deadline or cancellation ends it.
package deaflisten

import (
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// New returns such an address on 127.0.0.1. The socket and the connects
// that filled its queue are closed when tb ends. tb is skipped when the
// queue never fills (a kernel that answers anyway), failed on any other
// error.
func New(tb testing.TB) netip.AddrPort {
	tb.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		tb.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		tb.Fatal(err)
	}
	in4 := sa.(*unix.SockaddrInet4)
	ap := netip.AddrPortFrom(netip.AddrFrom4(in4.Addr), uint16(in4.Port))
	for i := 0; ; i++ { // fill the queue until a connect stays in progress
		c, err := net.DialTimeout("tcp", ap.String(), 300*time.Millisecond)
		if err != nil {
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				return ap
			}
			tb.Fatalf("deaf listener %s: connect %d: %v", ap, i, err)
		}
		tb.Cleanup(func() { c.Close() })
		if i > 16 {
			tb.Skip("the listener's accept queue never filled")
		}
	}
}
