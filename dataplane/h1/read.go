package h1

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"time"
)

// releaseBuf returns the read buffer to its pool.
func (cs *conn) releaseBuf() {
	if cs.bufp == nil {
		return
	}
	switch cap(*cs.bufp) {
	case BufferSize:
		bufPool.Put(cs.bufp)
	case BodyBufferSize:
		bodyBufPool.Put(cs.bufp)
	default:
		cs.srv.bigPool.Put(cs.bufp)
	}
	cs.bufp, cs.buf = nil, nil
}

// growBuf moves the unread bytes into a buffer of MaxHeaderBytes.
func (cs *conn) growBuf() {
	max := cs.srv.maxHeaderBytes()
	bp, _ := cs.srv.bigPool.Get().(*[]byte)
	if bp == nil || len(*bp) != max {
		b := make([]byte, max)
		bp = &b
	}
	n := copy(*bp, cs.buf[cs.r:cs.w])
	cs.releaseBuf()
	cs.bufp, cs.buf, cs.r, cs.w = bp, *bp, 0, n
}

// readHead reads until buf[r:] holds a whole head and returns the index
// just past it. A bare LF answers 400 at once; a head longer than
// MaxHeaderBytes 431. ok=false on a read error, end of file or timeout
// (the connection is then closed without a response, as net/http does).
func (cs *conn) readHead() (end int, herr *headError, ok bool) {
	max := cs.srv.maxHeaderBytes()
	if cs.r == cs.w {
		if !cs.awaitHead() {
			return 0, nil, false
		}
	} else if !cs.served {
		cs.setReadDeadline(cs.headDeadline)
	}
	// A later request's header timeout runs from its first byte; it is
	// armed only when the head needs another read (most arrive whole in
	// the first one).
	needDeadline := cs.served
	checked := cs.r // bytes before checked hold no bare LF
	for {
		if cs.skipCRLF && cs.w-cs.r >= 2 {
			cs.skipCRLF = false
			if cs.buf[cs.r] == '\r' && cs.buf[cs.r+1] == '\n' {
				cs.r += 2
				checked = cs.r
			}
		}
		if !cs.skipCRLF {
			// Each LF (found with IndexByte, not byte by byte: a
			// browser's head is hundreds of bytes) ends a CRLF line;
			// CRLFCRLF ends the head.
			for i := checked; i < cs.w; i++ {
				j := bytes.IndexByte(cs.buf[i:cs.w], '\n')
				if j < 0 {
					break
				}
				i += j
				if i == cs.r || cs.buf[i-1] != '\r' {
					return 0, badRequest("bare LF"), true
				}
				if i-cs.r >= 3 && cs.buf[i-2] == '\n' && cs.buf[i-3] == '\r' {
					if i+1-cs.r > max {
						return 0, tooLarge, true
					}
					return i + 1, nil, true
				}
			}
			checked = cs.w
			if cs.w-cs.r >= max {
				return 0, tooLarge, true
			}
		}
		if cs.w == len(cs.buf) {
			if cs.r > 0 {
				n := copy(cs.buf, cs.buf[cs.r:cs.w])
				checked -= cs.r
				cs.r, cs.w = 0, n
			} else {
				cs.growBuf()
			}
		}
		if needDeadline {
			cs.deadline(cs.srv.ReadHeaderTimeout)
			needDeadline = false
		}
		n, err := cs.c.Read(cs.buf[cs.w:])
		cs.w += n
		if err != nil && n == 0 {
			return 0, nil, false
		}
	}
}

// awaitHead waits for the first bytes of the next request on an emptied
// buffer: the first request's head deadline, or the keep-alive idle wait
// (up to idleHandoff on this goroutine, see run). false: nothing came
// (closed, timed out, draining or handed off; cs.handoff tells).
func (cs *conn) awaitHead() bool {
	cs.r, cs.w = 0, 0
	if !cs.served {
		cs.setReadDeadline(cs.headDeadline)
		return true
	}
	now := time.Now()
	if cs.idleUntil.IsZero() {
		cs.srv.state(cs.c, http.StateIdle)
		if idle := cs.srv.IdleTimeout; idle > 0 {
			cs.idleUntil = now.Add(idle)
		} else {
			cs.idleUntil = noIdleTimeout
		}
	}
	if d := cs.srv.Draining; d != nil && d() {
		return false
	}
	// The wait, up to idleHandoff, on this goroutine; the rest on
	// a new one (see run).
	wait := cs.idleUntil
	handoff := wait.Equal(noIdleTimeout) || wait.Sub(now) > idleHandoff
	switch {
	case !handoff:
		cs.setReadDeadline(wait)
	case cs.handoffDeadline.Sub(now) >= idleHandoff*3/4:
		// still armed from the previous wait: keep it
	default:
		wait = now.Add(idleHandoff)
		cs.setReadDeadline(wait)
		cs.handoffDeadline = wait
	}
	n, err := cs.readIdle()
	if handoff && err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		cs.handoff = true
		return false
	}
	cs.idleUntil = time.Time{}
	if err != nil || n == 0 {
		return false
	}
	cs.srv.state(cs.c, http.StateActive)
	cs.w = n
	return true
}

var tooLarge = &headError{status: http.StatusRequestHeaderFieldsTooLarge, reason: "request head too large"}

// readIdleBuffered is readIdle for connections without a file descriptor
// (TLS): it waits holding a small buffer (a large one is given back).
func (cs *conn) readIdleBuffered() (int, error) {
	if cs.bufp == nil || cap(*cs.bufp) != BufferSize {
		cs.releaseBuf()
		cs.bufp = bufPool.Get().(*[]byte)
		cs.buf = *cs.bufp
	}
	return cs.c.Read(cs.buf)
}

// deadline sets the read deadline d from now (none for 0).
func (cs *conn) deadline(d time.Duration) {
	if d > 0 {
		cs.setReadDeadline(time.Now().Add(d))
	} else {
		cs.setReadDeadline(time.Time{})
	}
}

// setReadDeadline sets the read deadline; it is no longer the idle wait's
// handoff deadline.
func (cs *conn) setReadDeadline(t time.Time) {
	cs.handoffDeadline = time.Time{}
	_ = cs.c.SetReadDeadline(t)
}

// armRead sets the body read deadline (ReadTimeout from now) unless the
// handler set its own.
func (cs *conn) armRead() {
	cs.rdMu.Lock()
	defer cs.rdMu.Unlock()
	if !cs.userReadDeadline {
		cs.deadline(cs.srv.ReadTimeout)
	}
}

// fixReadDeadline sets the read deadline to t, and keeps armRead from
// changing it for the rest of the request: the handler's deadline
// (http.ResponseController), the drain's, or a past one cutting a read.
func (cs *conn) fixReadDeadline(t time.Time) error {
	cs.rdMu.Lock()
	defer cs.rdMu.Unlock()
	cs.userReadDeadline = true
	cs.handoffDeadline = time.Time{}
	return cs.c.SetReadDeadline(t)
}
