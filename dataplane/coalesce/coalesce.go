// Package coalesce gathers the writes of an HTTP/2 connection into fewer
// socket writes.
//
// Go's HTTP/2 server and client (net/http's bundled server, x/net/http2's
// Transport) flush their frame buffer each time their write queue runs
// empty, and the frames of one exchange reach that queue one after the
// other from the handler's or caller's goroutine: with streams in flight a
// response is about two flushes (HEADERS, then DATA), a gRPC request three
// (HEADERS, DATA, the empty DATA that ends the stream), each its own
// write(2) (and over TLS its own record). A Writer sits between such a
// connection and its socket and hands the writes to the socket from one
// goroutine, so everything the connection produced while a socket write was
// in progress, or before that goroutine ran, leaves in one write(2), as
// nginx gathers a connection's output per event loop pass. Measured through
// the binary (integration/bench, h2 route: h2load, 10 TLS connections × 10
// streams, 1 KiB GET): 3.2 → 1.2 write(2) per request, one of them the
// upstream request.
package coalesce

import (
	"net"
	"sync"
	"time"
)

// MaxPending is what a Writer keeps unwritten before a Write waits for
// the socket: 64 KiB, the default HTTP/2 flow-control window, so a
// connection buffers no more than a client may have outstanding anyway.
const MaxPending = 64 << 10

// CloseTimeout bounds the write of what is still pending when the
// connection closes (a GOAWAY, a TLS close_notify): crypto/tls gives its
// close_notify the same 5 s.
const CloseTimeout = 5 * time.Second

// Writer is the write side of one HTTP/2 connection (see the package
// doc). Write appends to what is pending and returns; Run, on a goroutine
// of its own, writes it to the socket, taking everything gathered since its
// previous write each time. A socket write error is returned by every later
// Write. Close hands the socket to Run, which writes what is pending
// (bounded by CloseTimeout) and closes it. Write and Close may be called
// from any goroutine; Run exactly once.
type Writer struct {
	conn net.Conn // the socket

	mu      sync.Mutex
	ready   sync.Cond // Run waits on it for pending bytes or closing
	room    sync.Cond // Write waits on it while pending is at MaxPending
	pending *[]byte   // from bufs; nil while nothing is pending
	err     error     // the first write error, or net.ErrClosed after Close
	closing bool      // Close was called: Run closes conn when pending is written
	exited  bool      // Run returned (conn is closed)
}

// bufs holds the buffers of pending bytes: a connection holds one
// only while it has something to write, so an idle HTTP/2 connection keeps
// none (as net/http's frame buffer).
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// putBuf returns b to bufs unless it grew past twice
// MaxPending (a single huge Write).
func putBuf(b *[]byte) {
	if cap(*b) <= 2*MaxPending {
		*b = (*b)[:0]
		bufs.Put(b)
	}
}

func (w *Writer) pendingLen() int {
	if w.pending == nil {
		return 0
	}
	return len(*w.pending)
}

// New returns the Writer of the socket conn; start its Run before the
// connection's first Write can need the socket to progress.
func New(conn net.Conn) *Writer {
	w := &Writer{conn: conn}
	w.ready.L = &w.mu
	w.room.L = &w.mu
	return w
}

// Write appends b to what the writer sends next. It waits while
// MaxPending bytes are pending, and fails after a write failed or the
// connection closed.
func (w *Writer) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.err == nil && w.pendingLen() > 0 && w.pendingLen()+len(b) > MaxPending {
		w.room.Wait()
	}
	if w.err != nil {
		return 0, w.err
	}
	if len(b) == 0 {
		return 0, nil
	}
	if w.pending == nil {
		w.pending = bufs.Get().(*[]byte)
		w.ready.Signal()
	}
	*w.pending = append(*w.pending, b...)
	return len(b), nil
}

// Close makes Run write what is pending and close the socket; with Run
// gone (a write failed), it closes the socket itself. Only the first call
// does anything; later ones return net.ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return net.ErrClosed
	}
	w.closing = true
	if w.err == nil {
		w.err = net.ErrClosed
	}
	exited, flush := w.exited, w.pending != nil
	w.ready.Signal()
	w.room.Broadcast()
	w.mu.Unlock()
	if exited {
		return w.conn.Close()
	}
	if flush {
		_ = w.conn.SetWriteDeadline(time.Now().Add(CloseTimeout))
	}
	return nil
}

// Run writes pending bytes until Close or a failed write; it closes the
// socket before it returns.
func (w *Writer) Run() {
	defer w.conn.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for w.pending == nil && !w.closing {
			w.ready.Wait()
		}
		if w.pending == nil {
			w.exited = true
			return
		}
		buf := w.pending
		w.pending = nil
		w.mu.Unlock()
		_, err := w.conn.Write(*buf)
		putBuf(buf)
		w.mu.Lock()
		w.room.Broadcast()
		if err != nil {
			w.err = err
			if w.pending != nil {
				putBuf(w.pending)
				w.pending = nil
			}
			w.exited = true
			return
		}
	}
}

// Conn is a connection whose writes go through a Writer: hand it to an
// HTTP/2 client or server in place of the socket and run its Run on a
// goroutine of the caller's.
type Conn struct {
	net.Conn
	w *Writer
}

// NewConn returns the Conn of the socket c.
func NewConn(c net.Conn) *Conn { return &Conn{Conn: c, w: New(c)} }

// Write is the Writer's Write.
func (c *Conn) Write(b []byte) (int, error) { return c.w.Write(b) }

// Close is the Writer's Close: the socket closes once what is pending is
// written.
func (c *Conn) Close() error { return c.w.Close() }

// Run is the Writer's Run: it returns once the socket is closed.
func (c *Conn) Run() { c.w.Run() }

// NetConn returns the socket, as tls.Conn's NetConn does.
func (c *Conn) NetConn() net.Conn { return c.Conn }
