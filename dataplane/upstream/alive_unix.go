//go:build unix

package upstream

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// alive reports whether an idle pooled connection is still usable: a
// non-blocking MSG_PEEK read that finds nothing to read (EAGAIN) means yes;
// end of file (the server closed it while idle), a reset, or bytes the
// server sent unasked mean no.
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
		// Only "nothing to read yet" means alive: end of file (closed),
		// any error (reset) and unexpected bytes all mean dead.
		_, _, rerr := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		ok = rerr == unix.EAGAIN
		return true
	})
	return ok && err == nil
}
