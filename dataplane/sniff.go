package dataplane

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
)

// trackedConn is an accepted connection whose first byte was read to tell
// TLS (a handshake record starts with 0x16) from plain HTTP. It replays
// that byte, and removes itself from its entrypoint's connection set when
// closed, so Shutdown can close what is left (upgraded connections) at the
// end of the grace period.
type trackedConn struct {
	// fast is set while the h1 fast path owns the connection.
	fast atomic.Bool
	net.Conn
	first   []byte
	ep      *entryPoint
	closed  sync.Once
	sniffed atomic.Bool // the first byte arrived
}

func (c *trackedConn) Read(b []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(b, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// SyscallConn exposes the socket, for the fast path's buffer-free wait
// between requests (package h1).
func (c *trackedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("connection has no file descriptor")
	}
	return sc.SyscallConn()
}

// Close closes the connection and forgets it.
func (c *trackedConn) Close() error {
	c.closed.Do(func() { c.ep.forget(c) })
	return c.Conn.Close()
}

// CloseWrite half-closes the connection when the underlying one can, so the
// proxy propagates a backend's end of stream on upgraded (WebSocket)
// connections instead of waiting for the client.
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// chanListener is a net.Listener fed by the sniffing goroutines: the plain
// and the TLS http.Server of a listener each Accept from one.
type chanListener struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for the next connection; after Close it returns net.ErrClosed.
func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// push hands c to the server; it closes c if the listener is closed.
func (l *chanListener) push(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.done:
		_ = c.Close()
	}
}

// Close stops Accept. Idempotent.
func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is the address of the underlying listener.
func (l *chanListener) Addr() net.Addr { return l.addr }
