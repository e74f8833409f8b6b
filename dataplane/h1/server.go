package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"sync"
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

func (s *Server) spawn(f func()) {
	if s.Go != nil {
		s.Go(f)
		return
	}
	go f()
}

func (s *Server) state(c net.Conn, st http.ConnState) {
	if s.ConnState != nil {
		s.ConnState(c, st)
	}
}
