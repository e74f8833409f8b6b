//go:build linux

package rawtcp

import (
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeSize is the capacity asked of a splice pipe (F_SETPIPE_SZ, 1 MiB, as
// Go's own splice asks; an unprivileged process may get up to
// /proc/sys/fs/pipe-max-size, 1 MiB by default, else the pipe keeps its
// 64 KiB).
const pipeSize = 1 << 20

// pipe is a kernel pipe between two sockets: splice(2) moves bytes from
// the source socket into it and from it to the destination, without
// copying them to user space. A pipe back in the pool is empty.
type pipe struct {
	r, w    int
	size    int             // capacity, bytes
	cleanup runtime.Cleanup // closes r and w once the pool drops the pipe
}

// pipes holds empty pipes; one dropped by the GC is closed by its cleanup.
var pipes sync.Pool

// close closes a pipe at once (one that may hold bytes never goes back to
// the pool: its descriptors would otherwise stay open until a GC runs its
// cleanup, and a burst of failing copies could exhaust the descriptor
// limit).
func (p *pipe) close() {
	p.cleanup.Stop()
	_ = unix.Close(p.r)
	_ = unix.Close(p.w)
}

// getPipe returns an empty pipe, from the pool or new.
func getPipe() (*pipe, error) {
	if p, ok := pipes.Get().(*pipe); ok {
		return p, nil
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	p := &pipe{r: fds[0], w: fds[1], size: 64 << 10}
	if n, err := unix.FcntlInt(uintptr(p.w), unix.F_SETPIPE_SZ, pipeSize); err == nil {
		p.size = n
	}
	p.cleanup = runtime.AddCleanup(p, func(fds [2]int) { _ = unix.Close(fds[0]); _ = unix.Close(fds[1]) }, fds)
	return p, nil
}

// Copy moves src's bytes to dst until src's end of stream (nil) or an
// error, with splice(2) through a pooled pipe, and reports each pipeful
// written to dst to counted (when not nil) as it goes. Both ends must be
// TCP sockets (*net.TCPConn or *Conn); ok is false, and nothing is done,
// for any other pair. Reads and writes wait through Go's poller, so the
// ends' deadlines and a Close from another goroutine end Copy with their
// errors (net.ErrClosed, os.ErrDeadlineExceeded), as io.Copy's.
func Copy(dst, src net.Conn, counted func(int64)) (ok bool, err error) {
	dr, sr := rawOf(dst), rawOf(src)
	if dr == nil || sr == nil {
		return false, nil
	}
	p, err := getPipe()
	if err != nil {
		return true, err
	}
	for {
		n, held, err := p.move(dr, sr)
		if n > 0 && counted != nil {
			counted(n)
		}
		if err != nil {
			if held == 0 {
				pipes.Put(p) // empty: src ended or failed before filling it
			} else {
				p.close()
			}
			if err == io.EOF {
				err = nil
			}
			return true, err
		}
	}
}

// rawOf is c's raw connection when c is a TCP socket Copy can splice.
func rawOf(c net.Conn) syscall.RawConn {
	var sc syscall.Conn
	switch c := c.(type) {
	case *net.TCPConn:
		sc = c
	case *Conn:
		sc = c
	default:
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// spliceFlags: the pipe side never blocks; the socket is non-blocking.
const spliceFlags = unix.SPLICE_F_MOVE | unix.SPLICE_F_NONBLOCK

// move fills the empty pipe once from src (waiting for bytes) and drains
// it to dst, and returns the bytes written to dst and those left in the
// pipe (held, only with an error); io.EOF when src ended and nothing was
// moved.
func (p *pipe) move(dst, src syscall.RawConn) (written int64, held int, err error) {
	var n int
	var serr error
	err = src.Read(func(fd uintptr) bool {
		n, serr = splice(int(fd), p.w, p.size)
		return serr != unix.EAGAIN
	})
	if err != nil {
		return 0, 0, err
	}
	if serr != nil {
		return 0, 0, os.NewSyscallError("splice", serr)
	}
	if n == 0 {
		return 0, 0, io.EOF
	}
	for n > 0 {
		var m int
		err := dst.Write(func(fd uintptr) bool {
			m, serr = splice(p.r, int(fd), n)
			return serr != unix.EAGAIN
		})
		if err != nil {
			return written, n, err
		}
		if serr != nil {
			return written, n, os.NewSyscallError("splice", serr)
		}
		if m == 0 { // not seen: a pipe holding bytes gives them
			return written, n, io.ErrNoProgress
		}
		n -= m
		written += int64(m)
	}
	return written, 0, nil
}

// splice moves up to max bytes from in to out, retried on EINTR.
func splice(in, out, max int) (int, error) {
	for {
		n, err := unix.Splice(in, nil, out, nil, max, spliceFlags)
		if err != unix.EINTR {
			return int(n), err
		}
	}
}
