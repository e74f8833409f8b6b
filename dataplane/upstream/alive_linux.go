//go:build linux

package upstream

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// alive reports whether an idle pooled connection is still usable: a
// non-blocking MSG_PEEK recv that finds nothing to read (EAGAIN) means yes;
// end of file (the server closed it while idle), a reset, or bytes the
// server sent unasked mean no. It costs one syscall, never waits and does
// not allocate (raw recvfrom, the RawConn and callback made once per
// connection).
func alive(pc *pconn) bool {
	if pc.raw == nil {
		return true
	}
	pc.peekOK = false
	if err := pc.raw.Read(pc.peekFn); err != nil {
		return false
	}
	return pc.peekOK
}

// peek is the RawConn.Read callback of alive.
func (pc *pconn) peek(fd uintptr) bool {
	var b [1]byte
	_, _, errno := unix.Syscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	pc.peekOK = errno == unix.EAGAIN
	return true
}
