package h1

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// restoreCtx sets the connection's context: http.LocalAddrContextKey, then
// ConnContext. A parked connection drops it (it is rebuilt on resume, so
// ConnContext runs again then).
func (cs *conn) restoreCtx() {
	ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, cs.c.LocalAddr())
	if cs.srv.ConnContext != nil {
		ctx = cs.srv.ConnContext(ctx, cs.c)
	}
	cs.ctx = ctx
}

// run serves the connection on the calling goroutine until it closes, is
// handed over, or stays idle for idleHandoff: then a new goroutine (with a
// small stack again) continues the idle wait and this one returns.
func (cs *conn) run() {
	cs.handoff = false
	end := cs.serve()
	cs.dropReuse()
	switch end {
	case endHandoff:
		if !cs.srv.park(cs) {
			cs.srv.spawn(cs.resume)
		}
	case endHanded:
		cs.releaseBuf()
	default:
		cs.closeNow()
	}
}

// resume continues the idle wait of a connection handed off by run. It
// waits itself, with the few frames of readIdle, so the new goroutine
// parks on its initial (smallest) stack; then run serves what arrived.
func (cs *conn) resume() {
	if d := cs.srv.Draining; d != nil && d() {
		cs.closeNow()
		return
	}
	if cs.ctx == nil { // parked
		cs.restoreCtx()
	}
	wait := cs.idleUntil
	if wait.Equal(noIdleTimeout) {
		wait = time.Time{}
	}
	cs.setReadDeadline(wait)
	n, err := cs.readIdle()
	if err != nil || n == 0 {
		cs.closeNow()
		return
	}
	cs.idleUntil = time.Time{}
	cs.srv.state(cs.c, http.StateActive)
	cs.r, cs.w = 0, n
	cs.run()
}

// closeNow closes the connection and reports it closed.
func (cs *conn) closeNow() {
	cs.releaseBuf()
	_ = cs.c.Close()
	cs.srv.state(cs.c, http.StateClosed)
}

// idleHandoff is how long a keep-alive connection waits for its next
// request on the goroutine that served the last one. After it the
// connection is parked without a goroutine (Linux: see park_linux.go) or
// the wait moves to a new goroutine (elsewhere): either way the old stack,
// grown by the handler (typically to 8 KiB) and only shrunk by a GC, is
// freed. A busy connection (requests less than idleHandoff apart) never
// pays for the move; a later request pays a few microseconds (an epoll
// registration, a wake-up and a new goroutine), nothing next to a gap of
// idleHandoff or more. It is short because every connection that goes idle
// holds its stack (and its reuse state) for that long: 10 000 connections
// opened at about 4 000/s each served one request and went idle held ~1 000
// stacks at 250 ms, which kept ~0.9 KiB per idle connection in RSS after
// the stacks were freed; at 50 ms the measured RSS per idle connection
// fell from 3.0–3.9 KiB to 2.4 KiB (integration/bench idle connections).
const idleHandoff = 50 * time.Millisecond

// How serve ended.
const (
	endClose   = iota // close the connection
	endHanded         // hijacked or handed to H2C: not ours any more
	endHandoff        // idle: continue on a new goroutine
)

type conn struct {
	srv      *Server
	c        net.Conn
	raw      syscall.RawConn // nil when c exposes no file descriptor (TLS)
	tlsState *tls.ConnectionState
	bufp     *[]byte // buf's pool entry; nil while idle without a buffer
	buf      []byte
	r, w     int // unread bytes are buf[r:w]
	remote   string
	ctx      context.Context // the connection's; the parent of its requests' (reqContext); nil while parked

	headDeadline time.Time // of the first request head
	// rdMu orders the read deadline of the body (armRead, on whichever
	// goroutine reads it) with the handler's (SetReadDeadline) and the
	// server's own (a drain, cutting a blocked read): checking
	// userReadDeadline and setting the deadline happen together, so a
	// deadline set by the handler is never overwritten by a body read
	// that started before it.
	rdMu sync.Mutex
	// The read deadline armed for an idle wait's handoff; zero when the
	// read deadline is anything else (every other setter clears it). A
	// wait that starts while it is still at least idleHandoff*3/4 away
	// keeps it, so a busy connection re-arms it every idleHandoff/4 or so
	// rather than on every request (the handoff moment is a heuristic).
	handoffDeadline time.Time
	// The idle wait's end (noIdleTimeout for none; zero when not idle).
	idleUntil    time.Time
	fd           int32              // the socket, once parked; -1 before
	parkGen      uint32             // under the parker's mu: the generation of this park (park_linux.go)
	finalStarted atomic.Bool        // the handler chose a final status: no 100 Continue any more
	pprev, pnext *conn              // the parker's timeout list, under its mu
	idleFn       func(uintptr) bool // readIdle's callback (idle_unix.go)
	idleErr      error

	reuse *reuse // while busy; nil once idle for idleHandoff

	// wmu orders writes to c: the response (through connWriter) and an
	// automatic 100 Continue sent by a body Read on another goroutine.
	wmu sync.Mutex

	// Client-gone detection for slow bodyless requests: watchTimer starts
	// watch when a handler has run for watchAfter. The timer is not re-armed
	// per request: once armed it fires watchAfter later, and re-arms
	// itself if the request in its handler then is not the one it was
	// armed for, so a request is watched after 100–200 ms and a busy
	// connection pays for a timer change every watchAfter, not every
	// request. Under rdMu but for reqCtx (the serving goroutine's, set
	// before watchOn) and watchDone.
	reqCtx     *reqContext // the current request's context
	watchTimer *time.Timer // nil until needed, and while parked
	watchDone  chan struct{}

	// Small fields, together so that they pack.
	watchSeq         uint16 // under rdMu: counts the bodyless requests (wraps; compared for equality)
	watchArmSeq      uint16 // under rdMu: watchSeq when the timer was armed
	watchGen         uint16 // under rdMu: counts the timers dropped (parking; wraps)
	served           bool   // a request was read (the first head's deadline is used up)
	skipCRLF         bool   // a body just ended: one stray CRLF may follow (RFC 9112 §2.2)
	userReadDeadline bool   // under rdMu: the deadline is not armRead's to set
	watchCut         bool   // under rdMu: endWatch cut the watch; it must not clear the deadline
	watchOn          bool   // under rdMu: a bodyless request's handler runs (it may be watched)
	watchArmed       bool   // under rdMu: watchTimer is armed
	watchRunning     bool   // under rdMu: watch started for this request; endWatch takes its watchDone
	hijacked         bool
	bodies           bool // a request had a Content-Length body: the idle read takes a BodyBufferSize buffer
	handoff          bool // the idle wait is to move to a new goroutine
	parked           bool // under the parker's mu (park_linux.go)
	continueSent     bool // under wmu
	watching         bool // the serving goroutine's: this request may be watched (endWatch to do)
	peerGone         bool // the connection failed: no response can be sent
	halfClosed       bool // the client sent EOF: answer, then close
}

// connWriter writes responses to the connection under wmu.
type connWriter struct{ cs *conn }

func (w connWriter) Write(p []byte) (int, error) {
	w.cs.wmu.Lock()
	defer w.cs.wmu.Unlock()
	if u := w.cs.reuse; u != nil && u.w.tail != nil {
		return u.w.writev(w.cs.c, p)
	}
	return w.cs.c.Write(p)
}

var continueLine = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// sendContinue sends 100 Continue, once, unless the handler already chose
// a final status (RFC 9110 §10.1.1, §15.2.1).
func (cs *conn) sendContinue() {
	cs.wmu.Lock()
	defer cs.wmu.Unlock()
	if cs.continueSent || cs.finalStarted.Load() {
		return
	}
	cs.continueSent = true
	_, _ = cs.c.Write(continueLine)
}

// reuse is what the requests of a busy connection reuse, so that a
// request costs no allocation for its Request, URL, header maps and
// context. It is dropped when the connection goes idle for idleHandoff,
// is hijacked or closes, so an idle connection holds none of it. Reuse is
// why the Request, its Header, URL and context, and the ResponseWriter's
// Header must not be used after ServeHTTP returns (see Server); strings
// taken from them stay valid.
type reuse struct {
	w      response      // the ResponseWriter
	ctx    *reqContext   // nil after a request that waited on it
	base   *http.Request // zero but for its context, ctx
	req    http.Request
	mem    headMem
	header http.Header // the request's
	resp   http.Header // the response's
}

// reuseMaxFields bounds the header maps kept for the next request: a map
// that grew past it is dropped (Go maps do not shrink).
const reuseMaxFields = 32

// trim drops header maps that grew large.
func (u *reuse) trim() {
	if len(u.header) > reuseMaxFields {
		u.header = nil
	}
	if len(u.resp) > reuseMaxFields {
		u.resp = nil
	}
}

// dropReuse frees the connection's reuse state (see reuse).
func (cs *conn) dropReuse() {
	if u := cs.reuse; u != nil {
		if u.ctx != nil {
			u.ctx.cancel(nil) // nobody waits on it; stops a watch of the parent
		}
		cs.reuse = nil
	}
}
