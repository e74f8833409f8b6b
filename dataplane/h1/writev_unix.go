//go:build unix

package h1

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// writev2 writes a then b to the socket behind rc in one writev(2) (more
// only when the socket takes part of them), waiting through the netpoller
// while it is full; the connection's write deadline applies. It returns
// the bytes written, of a and b together.
func writev2(rc syscall.RawConn, a, b []byte) (int, error) {
	var iov [2]unix.Iovec
	total, done := len(a)+len(b), 0
	var werr error
	err := rc.Write(func(fd uintptr) bool {
		for done < total {
			cnt := 0
			if done < len(a) {
				iov[0].Base = &a[done]
				iov[0].SetLen(len(a) - done)
				cnt = 1
			}
			if off := max(done-len(a), 0); off < len(b) {
				iov[cnt].Base = &b[off]
				iov[cnt].SetLen(len(b) - off)
				cnt++
			}
			n, _, e := unix.Syscall(unix.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(cnt))
			switch e {
			case 0:
				done += int(n)
			case unix.EINTR:
			case unix.EAGAIN:
				return false
			default:
				werr = os.NewSyscallError("writev", e)
				return true
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return done, err
}
