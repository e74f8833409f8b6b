//go:build unix

package upstream

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// alive reports whether an idle pooled connection is still open: a
// non-blocking MSG_PEEK read that finds nothing to read (EAGAIN) means yes;
// end of file (the server closed it while idle) or unexpected bytes mean no.
// It costs one syscall and never waits.
func alive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	ok = true
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		ok = n < 0 || n == 0 && rerr == unix.EAGAIN || rerr == unix.EAGAIN
		if n == 0 && rerr == nil {
			ok = false // orderly shutdown by the server
		}
		return true
	})
	return ok && err == nil
}
