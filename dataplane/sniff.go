package dataplane

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/coalesce"
	"github.com/gantry-proxy/gantry/dataplane/conninfo"
	"github.com/gantry-proxy/gantry/internal/replayconn"
)

// trackedConn is an accepted connection whose first byte was read to tell
// TLS (a handshake record starts with 0x16) from plain HTTP. It replays
// that byte (or the bytes a TCP router's peek gave back: giveBack) before
// reading the socket again (replayconn.Conn's Read), and when closed removes itself from its entrypoint's
// connection set (so Shutdown can close what is left, upgraded connections,
// at the end of the grace period) and frees its connection slot.
type trackedConn struct {
	// idle is set while h1 waits for the connection's next request.
	idle atomic.Bool
	// busy is set while h1 reads or serves a request on the connection.
	busy atomic.Bool
	// Conn is the socket (Conn.Conn) and the bytes read from it still to
	// be replayed (Conn.Pending).
	replayconn.Conn
	ep       *entryPoint
	info     *conninfo.Info // the connection's facts, for every request on it
	accepted time.Time
	closed   sync.Once
	sniffed  atomic.Bool // the first byte arrived
	// kind is what the connection became (connPlain, connUpgraded,
	// connH2C, connClosed); upgraded connections are counted in
	// ep.upgraded while open, for the longer drain (shutdown.go).
	kind atomic.Int32
	// w gathers the writes of a connection served by HTTP/2 (package
	// coalesce); nil for every other connection. Set before the
	// connection is handed to the HTTP/2 server.
	w *coalesce.Writer
	// h2idle is when an HTTP/2 connection last had no open stream (Unix
	// ns), 0 while it has one or is not HTTP/2: the connection cap may
	// close it (conncap.go).
	h2idle atomic.Int64
}

// trackedConn kinds.
const (
	connPlain    = iota // served by h1 or h2, or not sniffed yet
	connUpgraded        // hijacked by a handler (Upgrade), or TCP-routed
	connH2C             // hijacked by h1 only to be handed to HTTP/2
	connClosed          // closed
)

// markUpgraded records that c was hijacked or TCP-routed: it now belongs
// to a tunnel (WebSocket, TCP stream), counted in ep.upgraded until it
// closes.
func (c *trackedConn) markUpgraded() {
	if c.kind.CompareAndSwap(connPlain, connUpgraded) {
		c.ep.upgraded.Add(1)
	}
}

// markH2C undoes markUpgraded for a connection h1 handed to HTTP/2 (h1
// reports that as a hijack too, just before the handover).
func (c *trackedConn) markH2C() {
	if c.kind.CompareAndSwap(connUpgraded, connH2C) {
		c.ep.upgraded.Add(-1)
	}
}

// upgradedNow reports whether c is an open upgraded connection.
func (c *trackedConn) upgradedNow() bool { return c.kind.Load() == connUpgraded }

// trackedOf returns the trackedConn under c (a TLS connection, or one
// handed over by h1, expose theirs with NetConn), or nil.
func trackedOf(c net.Conn) *trackedConn {
	for range 4 {
		switch v := c.(type) {
		case *trackedConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// Write writes b to the socket, or through the coalescer of an HTTP/2
// connection.
func (c *trackedConn) Write(b []byte) (int, error) {
	if c.w != nil {
		return c.w.Write(b)
	}
	return c.Conn.Write(b)
}

// SyscallConn exposes the socket, for h1's buffer-free wait between
// requests.
func (c *trackedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("connection has no file descriptor")
	}
	return sc.SyscallConn()
}

// Close closes the connection, forgets it and frees its slot.
func (c *trackedConn) Close() error {
	c.closed.Do(func() {
		if c.kind.Swap(connClosed) == connUpgraded {
			c.ep.upgraded.Add(-1)
		}
		c.ep.forget(c)
		<-c.ep.slots
	})
	if c.w != nil {
		return c.w.Close()
	}
	return c.Conn.Close()
}

// CloseWrite half-closes the connection when the underlying one can, so the
// proxy propagates a backend's end of stream on upgraded (WebSocket)
// connections instead of waiting for the client.
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// chanListener is a net.Listener fed by the sniffing goroutines and h1: the
// HTTP/2 server of a listener Accepts from one.
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
