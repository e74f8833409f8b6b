//go:build linux

package upstream

import (
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// alive reports whether an idle pooled connection is still usable: a
// non-blocking MSG_PEEK recv that finds nothing to read (EAGAIN) means yes;
// end of file (the server closed it while idle), a reset, or bytes the
// server sent unasked mean no. It costs one syscall, never waits and does
// not allocate (raw recvfrom, the RawConn and callback made once per
// connection). It runs through RawConn.Control, which ignores the read
// deadline the last exchange left on the socket (RawConn.Read would fail
// at once once that passed, and drop every connection idle for longer
// than the 100 ms probe).
func alive(pc *pconn) bool {
	if pc.raw == nil {
		return true
	}
	pc.peekOK = false
	if err := pc.raw.Control(pc.peekFn); err != nil {
		return false
	}
	return pc.peekOK
}

// peek is the RawConn.Control callback of alive.
func (pc *pconn) peek(fd uintptr) {
	var b [1]byte
	_, _, errno := unix.Syscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	pc.peekOK = errno == unix.EAGAIN
}

// rawReads: body reads may run through the RawConn (rawRead).
const rawReads = true

// rawRead is readRaw's RawConn callback (made once per connection).
func (pc *pconn) rawRead(fd uintptr) bool {
	for {
		n, err := unix.Read(int(fd), pc.rp)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if pc.blk != nil {
				b := pc.blk
				b.blocked()
				if b.err != nil {
					return true // rn 0, rerr nil: the caller sees b.err
				}
			}
			return false
		case err != nil:
			pc.rerr = os.NewSyscallError("read", err)
		case n == 0:
			pc.rerr = io.EOF
		default:
			pc.rn = n
		}
		return true
	}
}
