//go:build unix

package h1

import (
	"errors"

	"golang.org/x/sys/unix"
)

// readIdle waits for the idle connection to become readable without
// holding a read buffer, then reads into one taken from the pool. A read
// that would block returns the buffer before the goroutine parks, so a
// keep-alive connection waiting for its next request costs no buffer. It
// makes no more syscalls than a plain Read. It returns the bytes read (0 at
// end of file) or the read error (the read deadline applies; buf is then
// nil). Connections
// without a file descriptor (TLS) wait holding a small buffer.
func (cs *conn) readIdle() (int, error) {
	if cs.raw == nil {
		return cs.readIdleBuffered()
	}
	cs.releaseBuf()
	if cs.idleFn == nil {
		cs.idleFn = cs.idleRead // bound once: no allocation per wait
	}
	cs.r, cs.w, cs.idleErr = 0, 0, nil
	if err := cs.raw.Read(cs.idleFn); err != nil { // buf stays nil: the connection closes or waits again
		return 0, err
	}
	return cs.w, cs.idleErr
}

// idleRead is readIdle's readiness callback: it reads into a pooled
// buffer (BodyBufferSize once the connection has sent a Content-Length
// body, so the next head and its body arrive in one read; BufferSize
// otherwise), or returns it to the pool and reports "not ready" (EAGAIN).
func (cs *conn) idleRead(fd uintptr) bool {
	pool := &bufPool
	if cs.bodies {
		pool = &bodyBufPool
	}
	bp := pool.Get().(*[]byte)
	m, err := unix.Read(int(fd), *bp)
	if errors.Is(err, unix.EAGAIN) {
		pool.Put(bp)
		return false
	}
	cs.bufp, cs.buf = bp, *bp
	cs.w, cs.idleErr = max(m, 0), err // buf[0:w] (r is 0)
	return true
}
