package h1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults of Server's limits.
const (
	// BufferSize is the read buffer of a connection while it reads a
	// request head or body; a head that does not fit moves to a buffer of
	// MaxHeaderBytes.
	BufferSize = 4096
	// BodyBufferSize is the read buffer of the idle wait's read on a
	// connection that has sent a request with a Content-Length body: a
	// head and a body of up to about 16 KiB then arrive in one read (a
	// 4 KiB upload needed two). It is taken only when the wait ends with
	// bytes to read, so an idle connection holds none.
	BodyBufferSize = 16 << 10
	// DefaultMaxHeaderBytes bounds a request head: request line, field
	// lines and the final empty line, CRLFs included. A head of exactly
	// this many bytes is served; one byte more is answered 431.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxHeaders bounds the field lines of a head (and of a
	// trailer section): more are answered 431, like Envoy and HAProxy.
	DefaultMaxHeaders = 100
)

// Server serves HTTP/1.1 (and HTTP/1.0) connections, plain or TLS; see the
// package doc. Fields are read-only once ServeConn has been called.
// Handler must not use the Request (Header, URL, Trailer), nor the
// ResponseWriter or its Header, after ServeHTTP returns: a connection
// reuses them for its next request (package doc, Reuse).
type Server struct {
	// Handler serves every request. Required.
	Handler http.Handler
	// H2C, when set, receives a connection whose first bytes are the
	// HTTP/2 prior-knowledge preface (RFC 9113 §3.4), with every byte read
	// so far replayed; without it such a connection gets 505.
	H2C func(net.Conn)
	// ReadHeaderTimeout bounds reading a request head. For the first
	// request it runs from the deadline given to ServeConn (the moment the
	// connection was accepted, so the wait for the first byte, the TLS
	// handshake and the head share it); for later ones from their first
	// byte. IdleTimeout bounds the wait for that first byte between
	// requests. ReadTimeout bounds each read of a request body (an
	// inactivity timeout, re-armed on progress, so a steady large upload
	// is never cut). WriteTimeout bounds writing each response. 0 means
	// none.
	ReadHeaderTimeout, IdleTimeout, ReadTimeout, WriteTimeout time.Duration
	// MaxHeaderBytes (default DefaultMaxHeaderBytes) and MaxHeaders
	// (default DefaultMaxHeaders) bound request heads; see those.
	MaxHeaderBytes, MaxHeaders int
	// ConnContext derives the base context of the connection's requests.
	// It runs when ServeConn starts and again each time a parked idle
	// connection resumes (a parked connection keeps no context), so it
	// must derive an equivalent context every time.
	ConnContext func(context.Context, net.Conn) context.Context
	// ConnState is told StateNew when ServeConn starts, StateIdle when the
	// connection waits for its next request and StateActive when that
	// request's first bytes arrive, StateHijacked when a handler hijacks
	// the connection or it is handed to H2C, and StateClosed when it
	// closes.
	ConnState func(net.Conn, http.ConnState)
	// Draining, when it returns true, makes the connection close after the
	// response in progress (graceful shutdown).
	Draining func() bool
	// Parked, when set, is called each time a keep-alive connection is
	// parked idle (Linux; see CloseOldestParked). It must not block.
	Parked func()
	// Log receives handler panics other than http.ErrAbortHandler.
	Log *slog.Logger
	// Go starts the goroutines that continue serving connections after an
	// idle wait (see ServeConn) and the poller of parked connections; nil
	// means a go statement. Set it to a sync.WaitGroup's Go to join them
	// (call CloseIdle first: the poller runs until then).
	Go func(func())

	bigPool sync.Pool // buffers of MaxHeaderBytes

	parkOnce sync.Once
	parker   *parker // nil until a connection is first parked
	parkErr  error
}

func (s *Server) maxHeaderBytes() int {
	if s.MaxHeaderBytes > 0 {
		return s.MaxHeaderBytes
	}
	return DefaultMaxHeaderBytes
}

func (s *Server) maxHeaders() int {
	if s.MaxHeaders > 0 {
		return s.MaxHeaders
	}
	return DefaultMaxHeaders
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, BufferSize); return &b }}

// bodyBufPool holds the BodyBufferSize buffers (see readIdle).
var bodyBufPool = sync.Pool{New: func() any { b := make([]byte, BodyBufferSize); return &b }}

// writerPool holds response buffers; a connection takes one only while it
// writes a response, so idle connections hold none.
var writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, BufferSize) }}

// ServeConn serves c until it closes, fails, or is hijacked. headDeadline
// bounds the first request head (zero: ReadHeaderTimeout from now). It
// blocks; run it on the connection's own goroutine. When the connection
// waits for its next request for longer than idleHandoff (50 ms), it is
// parked without a goroutine (Linux; elsewhere the wait moves to a new
// goroutine) and ServeConn returns: the stack the handlers grew is freed.
// The request that ends the wait is served on a new goroutine (Go).
func (s *Server) ServeConn(c net.Conn, headDeadline time.Time) {
	s.state(c, http.StateNew)
	if headDeadline.IsZero() && s.ReadHeaderTimeout > 0 {
		headDeadline = time.Now().Add(s.ReadHeaderTimeout)
	}
	bp := bufPool.Get().(*[]byte)
	cs := &conn{srv: s, c: c, bufp: bp, buf: *bp, remote: c.RemoteAddr().String(),
		headDeadline: headDeadline, fd: -1}
	cs.restoreCtx()
	switch tc := c.(type) {
	case *tls.Conn:
		st := tc.ConnectionState()
		cs.tlsState = &st
	case syscall.Conn:
		cs.raw, _ = tc.SyscallConn()
	}
	cs.run()
}

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

func (s *Server) spawn(f func()) {
	if s.Go != nil {
		s.Go(f)
		return
	}
	go f()
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

func (s *Server) state(c net.Conn, st http.ConnState) {
	if s.ConnState != nil {
		s.ConnState(c, st)
	}
}

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

// watchAfter is how long a handler runs before the connection is watched
// for the client going away. Fast requests (most) never pay for a watch;
// slow ones (long polls, streams, a slow upstream) get net/http's
// behaviour: the request context is cancelled when the client leaves.
const watchAfter = 100 * time.Millisecond

var (
	aLongTimeAgo  = time.Unix(1, 0)
	noIdleTimeout = time.Unix(2, 0)
)

// startWatch arms the watch for the bodyless request whose handler is
// about to run (see watchTimer). Under rdMu.
func (cs *conn) startWatch() {
	cs.watching = true
	cs.watchSeq++
	cs.watchOn = true
	if cs.watchArmed {
		return // armed for an earlier request: it re-arms for this one
	}
	cs.watchArmed, cs.watchArmSeq = true, cs.watchSeq
	if cs.watchTimer != nil {
		cs.watchTimer.Reset(watchAfter)
		return
	}
	cs.watchDone = make(chan struct{}, 1)
	gen := cs.watchGen
	cs.watchTimer = time.AfterFunc(watchAfter, func() { cs.watchFired(gen) })
}

// watchFired runs on the goroutine of the timer made in generation gen: it
// starts the watch when the request it was armed for is still in its
// handler, re-arms for a later request, or lets the timer rest.
func (cs *conn) watchFired(gen uint16) {
	cs.rdMu.Lock()
	switch {
	case cs.watchGen != gen: // dropped when the connection parked
		cs.rdMu.Unlock()
		return
	case !cs.watchOn || cs.watchCut:
		cs.watchArmed = false
		cs.rdMu.Unlock()
		return
	case cs.watchSeq != cs.watchArmSeq:
		cs.watchArmSeq = cs.watchSeq
		cs.watchTimer.Reset(watchAfter)
		cs.rdMu.Unlock()
		return
	}
	cs.watchArmed, cs.watchRunning = false, true
	// A bodyless request leaves the idle wait's read deadline in place
	// (serveOne does not clear it, to save a deadline change per request):
	// the watch clears it, unless the handler set its own.
	if !cs.userReadDeadline {
		cs.setReadDeadline(time.Time{})
	}
	cs.rdMu.Unlock()
	cs.watch()
	cs.watchDone <- struct{}{}
}

// watch runs on the timer's goroutine while the handler of a bodyless
// request runs. A read that returns bytes keeps them (a pipelined request).
// End of file (the client half-closed, or left) cancels the request's
// context, as net/http does, and the response is still sent before the
// connection closes; an error (reset) cancels it and no response is
// attempted. The deadline set by endWatch ends a watch quietly.
func (cs *conn) watch() {
	if cs.w >= len(cs.buf) {
		return // the buffer is full of pipelined bytes: nothing to watch
	}
	n, err := cs.c.Read(cs.buf[cs.w:])
	cs.w += n
	if n == 0 && err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return
		}
		if errors.Is(err, io.EOF) {
			cs.halfClosed = true
		} else {
			cs.peerGone = true
		}
		cs.reqCtx.cancel(nil)
	}
}

// endWatch stops the watch of the current request, waiting for a running
// one to end. Idempotent.
func (cs *conn) endWatch() {
	if !cs.watching {
		return
	}
	cs.watching = false
	cs.rdMu.Lock()
	cs.watchOn = false
	running := cs.watchRunning
	if running {
		cs.watchCut = true
		cs.setReadDeadline(aLongTimeAgo)
	}
	cs.rdMu.Unlock()
	if !running {
		return // no watch started; one that fires later finds watchOn false
	}
	<-cs.watchDone
	cs.rdMu.Lock()
	cs.watchRunning = false
	cs.setReadDeadline(time.Time{})
	cs.rdMu.Unlock()
}

// replayConn replays pending bytes before reading from the connection: a
// hijacked connection, or one handed to H2C.
type replayConn struct {
	net.Conn
	pending []byte
}

// NetConn returns the connection replayConn wraps (like tls.Conn's).
func (c *replayConn) NetConn() net.Conn { return c.Conn }

// CloseWrite half-closes the connection when the underlying one can, so a
// hijacked (WebSocket) connection can pass half-close on.
func (c *replayConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.New("h1: connection cannot half-close")
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

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

// serve is the keep-alive loop; it reports how it ended.
func (cs *conn) serve() int {
	for {
		// A request that has arrived is always served (with Connection:
		// close while draining); shutdown cuts idle waits by deadline.
		end, herr, ok := cs.readHead()
		if cs.handoff {
			return endHandoff
		}
		if !ok {
			return endClose
		}
		if cs.reuse == nil {
			cs.reuse = new(reuse)
			cs.reuse.w.cs = cs
		}
		h := head{header: cs.reuse.header, mem: &cs.reuse.mem}
		if herr == nil {
			herr = parseHead(cs.buf[cs.r:end], &h, cs.srv.maxHeaders())
			cs.reuse.header = h.header
		}
		if herr == errH2Preface && !cs.served && cs.srv.H2C != nil {
			cs.handOver()
			return endHanded
		}
		cs.served = true
		if herr != nil {
			cs.reject(herr)
			return endClose
		}
		cs.r = end
		keep := cs.serveOne(&h)
		if cs.hijacked {
			return endHanded
		}
		if !keep {
			return endClose
		}
	}
}

// handOver gives the connection, with the unread bytes, to H2C.
func (cs *conn) handOver() {
	pending := bytes.Clone(cs.buf[cs.r:cs.w])
	cs.handoffDeadline = time.Time{}
	_ = cs.c.SetDeadline(time.Time{})
	cs.srv.state(cs.c, http.StateHijacked)
	cs.srv.H2C(&replayConn{Conn: cs.c, pending: pending})
}

// reject answers a refused request head and closes the connection after
// a lingering half-close, so the answer is not lost to a reset caused by
// unread request bytes.
func (cs *conn) reject(e *headError) {
	if cs.srv.WriteTimeout > 0 {
		_ = cs.c.SetWriteDeadline(time.Now().Add(cs.srv.WriteTimeout))
	} else {
		_ = cs.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	}
	text := http.StatusText(e.status)
	msg := text + ": " + e.reason + "\n"
	b := make([]byte, 0, 160+len(msg))
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, ' ')
	b = append(b, text...)
	b = append(b, "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(msg)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, msg...)
	if _, err := cs.c.Write(b); err == nil {
		cs.lingerClose()
	}
}

// Bounds of lingerClose: how long it waits for the client to close, and
// how many bytes it reads meanwhile.
const (
	lingerTimeout  = 500 * time.Millisecond // net/http's rstAvoidanceDelay
	lingerMaxBytes = 8 << 20
)

// lingerClose half-closes the connection (the last response is followed
// by a FIN) and reads and discards what the client still sends — the rest
// of an upload answered early, say with 413 — until it closes its side or
// lingerTimeout passes; then the caller closes. Closing with unread bytes
// would reset the connection, and a reset makes the client's kernel drop
// the response it has not read yet (a client still writing its upload
// sees "broken pipe" or "connection reset" instead of the answer). After
// lingerMaxBytes it stops reading (bounding the work) but still waits out
// lingerTimeout, as net/http's closeWriteAndWait does: the client, blocked
// on full socket buffers, has that long to read the answer.
func (cs *conn) lingerClose() {
	if cw, ok := cs.c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	until := time.Now().Add(lingerTimeout)
	cs.setReadDeadline(until)
	bp := bufPool.Get().(*[]byte)
	total := 0
	for total < lingerMaxBytes {
		n, err := cs.c.Read(*bp)
		total += n
		if err != nil {
			break
		}
	}
	bufPool.Put(bp)
	if total >= lingerMaxBytes {
		time.Sleep(time.Until(until))
	}
}

// readHead reads until buf[r:] holds a whole head and returns the index
// just past it. A bare LF answers 400 at once; a head longer than
// MaxHeaderBytes 431. ok=false on a read error, end of file or timeout
// (the connection is then closed without a response, as net/http does).
func (cs *conn) readHead() (end int, herr *headError, ok bool) {
	max := cs.srv.maxHeaderBytes()
	if cs.r == cs.w {
		cs.r, cs.w = 0, 0
		if !cs.served {
			cs.setReadDeadline(cs.headDeadline)
		} else {
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
				return 0, nil, false
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
				return 0, nil, false
			}
			cs.idleUntil = time.Time{}
			if err != nil || n == 0 {
				return 0, nil, false
			}
			cs.srv.state(cs.c, http.StateActive)
			cs.w = n
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
			for i := checked; i < cs.w; i++ {
				if cs.buf[i] != '\n' {
					continue
				}
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

// serveOne runs the handler for one request; false means close.
func (cs *conn) serveOne(h *head) (keep bool) {
	u := cs.reuse
	if u.ctx == nil {
		u.ctx = newReqContext(cs.ctx)
		u.base = (&http.Request{}).WithContext(u.ctx)
	}
	cs.reqCtx = u.ctx
	defer func() {
		if !u.ctx.end() { // waited on: cancelled as the handler returned
			u.ctx, u.base = nil, nil
		}
		cs.reqCtx = nil
		u.trim()
	}()
	// The connection's Request, reset from base (which carries the
	// context and no other state), then filled.
	r := &u.req
	*r = *u.base
	r.Method, r.URL, r.RequestURI, r.Host = h.method, h.url, h.target, h.host
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	r.Header, r.Body, r.ContentLength, r.Close = h.header, http.NoBody, h.contentLength, h.close
	r.Trailer, r.RemoteAddr, r.TLS = h.trailer, cs.remote, cs.tlsState
	if h.minor == 0 {
		r.Proto, r.ProtoMinor = "HTTP/1.0", 0
	}
	var b *body
	if h.contentLength > 0 {
		cs.bodies = true
	}
	if h.contentLength != 0 {
		b = &body{cs: cs, req: r, chunked: h.chunked, remain: h.contentLength, expect: h.expectContinue}
		r.Body = b
		if h.chunked {
			r.TransferEncoding = []string{"chunked"}
		}
	}
	if cs.srv.WriteTimeout > 0 {
		_ = cs.c.SetWriteDeadline(time.Now().Add(cs.srv.WriteTimeout))
	}
	cs.rdMu.Lock()
	cs.userReadDeadline, cs.watchCut = false, false
	if b == nil {
		cs.startWatch()
	}
	cs.rdMu.Unlock()
	if b != nil {
		cs.armRead()
	} // else the idle wait's or the head's deadline stays until a watch clears it

	cs.continueSent = false
	cs.finalStarted.Store(false)
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(connWriter{cs})
	w := &u.w
	if u.resp == nil {
		u.resp = make(http.Header, 8)
	} else {
		clear(u.resp)
	}
	w.reset(bw, r, h, b, u.resp)
	defer func() {
		bw.Reset(nil)
		writerPool.Put(bw)
		w.release()
	}()
	ok := cs.callHandler(w, r)
	cs.endWatch()
	if cs.hijacked {
		return false
	}
	if !ok || cs.peerGone {
		// An aborted or panicking handler: what it wrote stays incomplete
		// on the wire (no final chunk); the connection closes.
		if b != nil {
			b.finish()
		}
		return false
	}
	if cs.halfClosed || cs.srv.Draining != nil && cs.srv.Draining() {
		w.closeAfter = true
	}
	if err := w.finish(); err != nil {
		return false
	}
	unread := false
	if b != nil {
		cs.skipCRLF = true
		if !b.finish() {
			w.closeAfter, unread = true, true
		}
	}
	if w.closeAfter {
		if unread || cs.r < cs.w {
			cs.lingerClose()
		}
		return false
	}
	return true
}

// callHandler calls the handler, recovering a panic: http.ErrAbortHandler closes
// the connection silently, others are logged with a stack, as net/http does.
func (cs *conn) callHandler(w *response, r *http.Request) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			ok = false
			if v != http.ErrAbortHandler && cs.srv.Log != nil {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				cs.srv.Log.Error("panic serving request", "remote", cs.remote, "panic", v, "stack", string(buf))
			}
		}
	}()
	cs.srv.Handler.ServeHTTP(w, r)
	return true
}
