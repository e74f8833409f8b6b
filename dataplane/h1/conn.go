package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// Limits of the fast path. A request head larger than BufferSize, or with
// more than MaxHeaders fields, is handed to the standard library (which
// applies the entrypoint's own, larger, limits).
const (
	BufferSize = 4096
	MaxHeaders = 100
)

// Server serves plain HTTP/1.1 connections on the fast path; see the
// package doc. Fields are read-only once ServeConn has been called.
type Server struct {
	// Handler serves every fast-path request. Required.
	Handler http.Handler
	// Fallback receives a connection the fast path hands over, with the
	// bytes already read replayed first. Required.
	Fallback func(net.Conn)
	// ReadHeaderTimeout bounds reading a request head once its first byte
	// arrived; IdleTimeout bounds the wait for that first byte between
	// requests; WriteTimeout bounds writing each response. 0 means none.
	ReadHeaderTimeout, IdleTimeout, WriteTimeout time.Duration
	// ConnContext derives the base context of the connection's requests.
	ConnContext func(context.Context, net.Conn) context.Context
	// ConnState is told StateNew when ServeConn starts, StateHijacked when
	// the connection is handed to Fallback, and StateClosed when it closes.
	ConnState func(net.Conn, http.ConnState)
	// Draining, when it returns true, makes the connection close after the
	// response in progress (graceful shutdown).
	Draining func() bool
	// Log receives handler panics other than http.ErrAbortHandler.
	Log *slog.Logger
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, BufferSize); return &b }}

// writerPool holds response buffers; a connection takes one only while it
// writes a response, so idle connections hold none.
var writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, BufferSize) }}

// ServeConn serves c until it closes, fails, or is handed over. It blocks;
// run it on the connection's own goroutine.
func (s *Server) ServeConn(c net.Conn) {
	ctx := context.Background()
	if s.ConnContext != nil {
		ctx = s.ConnContext(ctx, c)
	}
	s.state(c, http.StateNew)
	bp := bufPool.Get().(*[]byte)
	cs := &conn{srv: s, c: c, bufp: bp, buf: *bp, remote: c.RemoteAddr().String(), ctx: ctx, watchDone: make(chan struct{}, 1)}
	cs.watchTimer = time.AfterFunc(time.Hour, cs.watch)
	cs.watchTimer.Stop()
	if sc, ok := c.(syscall.Conn); ok {
		cs.raw, _ = sc.SyscallConn()
	}
	handed := cs.serve()
	if cs.bufp != nil {
		bufPool.Put(cs.bufp)
	}
	if handed {
		return
	}
	c.Close()
	s.state(c, http.StateClosed)
}

func (s *Server) state(c net.Conn, st http.ConnState) {
	if s.ConnState != nil {
		s.ConnState(c, st)
	}
}

type conn struct {
	srv    *Server
	c      net.Conn
	raw    syscall.RawConn // nil when c exposes no file descriptor
	served bool            // a request was served (c's own replay bytes are consumed)
	bufp   *[]byte         // buf's pool entry; nil while idle without a buffer
	buf    []byte
	r, w   int // unread bytes are buf[r:w]
	remote string
	ctx    context.Context // the connection's; each request gets a child

	// Client-gone detection for slow requests: watchTimer starts watch
	// when a handler runs longer than watchAfter.
	reqCancel  context.CancelFunc // cancels the current request's context
	watchTimer *time.Timer
	watchDone  chan struct{}
	peerGone   bool // the connection failed: no response can be sent
	halfClosed bool // the client sent EOF: answer, then close
}

// watchAfter is how long a handler runs before the connection is watched
// for the client going away. Fast requests (most) never pay for a watch;
// slow ones (long polls, streams, a slow upstream) get net/http's
// behaviour: the request context is cancelled when the client leaves.
const watchAfter = 100 * time.Millisecond

var aLongTimeAgo = time.Unix(1, 0)

// watch runs on the timer's goroutine while the handler runs. A read that
// returns bytes keeps them (a pipelined request). End of file (the client
// half-closed, or left) cancels the request's context, as net/http does,
// and the response is still sent before the connection closes; an error
// (reset) cancels it and no response is attempted. The deadline set by
// endWatch ends a watch quietly.
func (cs *conn) watch() {
	defer func() { cs.watchDone <- struct{}{} }()
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
		cs.reqCancel()
	}
}

// endWatch stops the watch of the request that just finished, waiting for
// a running one to end.
func (cs *conn) endWatch() {
	if cs.watchTimer.Stop() {
		return
	}
	_ = cs.c.SetReadDeadline(aLongTimeAgo)
	<-cs.watchDone
	_ = cs.c.SetReadDeadline(time.Time{})
}

// replayConn replays pending bytes before reading from the connection.
type replayConn struct {
	net.Conn
	pending []byte
}

// CloseWrite half-closes the connection when the underlying one can, so a
// handed-over upgraded connection (WebSocket) can still pass half-close on.
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

// serve is the keep-alive loop; it reports whether c was handed over.
func (cs *conn) serve() (handed bool) {
	for {
		// A request that has arrived is always served (with Connection:
		// close while draining); shutdown cuts idle waits by deadline.
		end, ok := cs.readHead()
		if !ok {
			return false
		}
		var h head
		if end < 0 || !parseHead(cs.buf[cs.r:end], &h) {
			cs.handOver()
			return true
		}
		cs.r = end
		cs.served = true
		if !cs.serveOne(&h) {
			return false
		}
		if cs.r == cs.w {
			cs.r, cs.w = 0, 0
		}
	}
}

// handOver gives the connection, with the unread bytes, to Fallback.
func (cs *conn) handOver() {
	pending := bytes.Clone(cs.buf[cs.r:cs.w])
	_ = cs.c.SetDeadline(time.Time{})
	cs.srv.state(cs.c, http.StateHijacked)
	cs.srv.Fallback(&replayConn{Conn: cs.c, pending: pending})
}

// readHead reads until buf[r:] holds a whole head, and returns the index
// just past it; -1 when the head does not fit the buffer; ok=false on a
// read error or timeout (the connection is then closed without a response,
// as net/http does).
func (cs *conn) readHead() (end int, ok bool) {
	if cs.r == cs.w {
		cs.r, cs.w = 0, 0
		cs.deadline(cs.srv.IdleTimeout)
		if cs.raw != nil && cs.served {
			// Between requests: wait holding no buffer (the idle cost of a
			// keep-alive connection), and read into one once data arrives.
			n, err := cs.readIdle()
			if err != nil || n == 0 {
				return 0, false
			}
			cs.w = n
			cs.deadline(cs.srv.ReadHeaderTimeout)
		}
	} else {
		cs.deadline(cs.srv.ReadHeaderTimeout)
	}
	first := cs.r == cs.w
	checked := cs.r // bytes before checked hold no bare LF
	for {
		// A bare LF (RFC 9112 §2.2) never ends a head here: hand it over at
		// once rather than wait for a CRLF CRLF that may never come.
		for i := checked; i < cs.w; i++ {
			if cs.buf[i] != '\n' {
				continue
			}
			if i == cs.r || cs.buf[i-1] != '\r' {
				return -1, true
			}
			if i-cs.r >= 3 && cs.buf[i-2] == '\n' && cs.buf[i-3] == '\r' {
				return i + 1, true
			}
		}
		checked = cs.w
		if cs.w == len(cs.buf) {
			if cs.r == 0 {
				return -1, true
			}
			n := copy(cs.buf, cs.buf[cs.r:cs.w])
			checked -= cs.r
			cs.r, cs.w = 0, n
		}
		n, err := cs.c.Read(cs.buf[cs.w:])
		cs.w += n
		if err != nil && n == 0 {
			return 0, false
		}
		if first && n > 0 {
			first = false
			cs.deadline(cs.srv.ReadHeaderTimeout)
		}
	}
}

func (cs *conn) deadline(d time.Duration) {
	if d > 0 {
		_ = cs.c.SetReadDeadline(time.Now().Add(d))
	} else {
		_ = cs.c.SetReadDeadline(time.Time{})
	}
}

// serveOne runs the handler for one request; false means close.
func (cs *conn) serveOne(h *head) (keep bool) {
	// A context per request, cancelled when the handler returns (as with
	// net/http) or when the client goes away (see watch).
	ctx, cancel := context.WithCancel(cs.ctx)
	defer cancel()
	cs.reqCancel = cancel
	r := (&http.Request{}).WithContext(ctx)
	r.Method, r.URL, r.RequestURI, r.Host = h.method, h.url, h.target, h.host
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	r.Header, r.Body, r.Close, r.RemoteAddr = h.header, http.NoBody, h.close, cs.remote
	if cs.srv.WriteTimeout > 0 {
		_ = cs.c.SetWriteDeadline(time.Now().Add(cs.srv.WriteTimeout))
	}
	_ = cs.c.SetReadDeadline(time.Time{})
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(cs.c)
	w := &response{bw: bw, req: r, header: make(http.Header, 8), cl: -1, closeAfter: h.close}
	defer func() {
		bw.Reset(nil)
		writerPool.Put(bw)
	}()
	cs.watchTimer.Reset(watchAfter)
	ok := cs.run(w, r)
	cs.endWatch()
	if !ok || cs.peerGone {
		return false
	}
	if cs.halfClosed || cs.srv.Draining != nil && cs.srv.Draining() {
		w.closeAfter = true
	}
	if err := w.finish(); err != nil {
		return false
	}
	return !w.closeAfter
}

// run calls the handler, recovering a panic: http.ErrAbortHandler closes
// the connection silently, others are logged with a stack, as net/http does.
func (cs *conn) run(w *response, r *http.Request) (ok bool) {
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
