package h1

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
	"unsafe"

	"github.com/gantry-proxy/gantry/dataplane/httpwire"
	"github.com/gantry-proxy/gantry/internal/replayconn"
)

// response is the server's http.ResponseWriter; it also implements
// http.Flusher, http.Hijacker and the methods http.ResponseController
// looks for (FlushError, SetReadDeadline, SetWriteDeadline,
// EnableFullDuplex). It must not be used after the handler returns, as
// net/http requires; the connection reuses it for its next request.
type response struct {
	cs     *conn
	bw     *bufio.Writer
	req    *http.Request
	body   *body // nil without a request body
	header http.Header
	http10 bool // the client speaks HTTP/1.0: no 1xx, no chunked

	status      int
	wroteHeader bool // a final status was chosen
	headerSent  bool // status line and fields written to bw
	bodyAllowed bool
	chunked     bool
	closeDelim  bool    // HTTP/1.0 body of unknown length: ends with the close
	cl          int64   // declared Content-Length; -1 unknown
	written     int64   // body bytes accepted
	pending     []byte  // body buffered before the header is sent; from pendp
	pendp       *[]byte // pending's bufPool entry, nil until needed
	closeAfter  bool
	keepAlive10 bool // HTTP/1.0 keep-alive was asked for
	err         error

	// writeThrough's: the body piece sent after bw's bytes in one writev.
	tail []byte
}

// writeThrough writes p after what bw holds. A piece larger than bw's
// free space (the upstream relay hands over up to 32 KiB at once) goes out
// with bw's bytes in one writev on a plain TCP connection, instead of
// being copied into bw in part and taking two writes.
func (w *response) writeThrough(p []byte) (int, error) {
	if len(p) <= w.bw.Available() || w.bw.Buffered() == 0 {
		return w.bw.Write(p)
	}
	w.tail = p
	err := w.bw.Flush()
	w.tail = nil
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// writev is connWriter's write of p (bw's bytes) and then w.tail: one
// writev on the socket of a plain connection, two writes over TLS.
func (w *response) writev(c net.Conn, p []byte) (int, error) {
	tail := w.tail
	w.tail = nil
	if w.cs.raw == nil {
		n, err := c.Write(p)
		if err == nil {
			_, err = c.Write(tail)
		}
		return n, err
	}
	n, err := writev2(w.cs.raw, p, tail)
	return min(n, len(p)), err
}

// reset prepares w for a request; header is the (empty) response header
// map, reused from request to request.
func (w *response) reset(bw *bufio.Writer, r *http.Request, h *head, b *body, header http.Header) {
	*w = response{cs: w.cs, bw: bw, req: r, body: b, header: header, cl: -1,
		closeAfter: h.close, http10: h.minor == 0, keepAlive10: h.keepAlive10}
}

// release returns the pending buffer to the pool once the response is done.
func (w *response) release() {
	if w.pendp != nil {
		bufPool.Put(w.pendp)
		w.pendp, w.pending = nil, nil
	}
	w.bw, w.req, w.body, w.header = nil, nil, nil, nil
}

func (w *response) Header() http.Header { return w.header }

// WriteHeader records the final status. A 1xx other than 101 is sent at
// once as an informational response with the current header fields (RFC
// 9110 §15.2; not to HTTP/1.0 clients); 100 also stops the automatic 100
// Continue. 101 is a final status without body, normally followed by
// Hijack.
func (w *response) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic("h1: invalid WriteHeader code " + strconv.Itoa(code))
	}
	if w.wroteHeader || w.cs.hijacked {
		return
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		if w.http10 || w.err != nil {
			return
		}
		if code == http.StatusContinue {
			w.cs.wmu.Lock()
			sent := w.cs.continueSent
			w.cs.continueSent = true
			w.cs.wmu.Unlock()
			if sent {
				return
			}
			if w.body != nil {
				w.body.mu.Lock()
				w.body.expect = false
				w.body.mu.Unlock()
			}
		}
		w.writeStatusLine(code)
		w.writeFields(false)
		w.bw.WriteString("\r\n")
		w.err = w.bw.Flush()
		return
	}
	w.cs.finalStarted.Store(true)
	w.wroteHeader = true
	w.status = code
	w.bodyAllowed = code != http.StatusNoContent && code != http.StatusNotModified &&
		code != http.StatusSwitchingProtocols && w.req.Method != http.MethodHead
	if v := w.header.Get("Content-Length"); v != "" {
		if n, ok := httpwire.ParseLength(v); ok {
			w.cl = n
		} else {
			w.header.Del("Content-Length")
		}
	}
	if _, ok := w.header["Trailer"]; ok && w.cl < 0 && !w.http10 {
		w.chunked = w.bodyAllowed
	}
}

// Write sends body bytes; see the package doc for the framing chosen.
func (w *response) Write(p []byte) (int, error) {
	if w.cs.hijacked {
		return 0, http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return 0, w.err
	}
	if !w.bodyAllowed {
		if w.req.Method == http.MethodHead {
			w.written += int64(len(p)) // announced as Content-Length, as net/http does
			return len(p), nil
		}
		return 0, http.ErrBodyNotAllowed
	}
	switch {
	case w.cl >= 0:
		if !w.headerSent {
			w.sendHeader()
		}
		n := len(p)
		var err error
		if rem := w.cl - w.written; int64(n) > rem {
			p, err = p[:rem], http.ErrContentLength
		}
		m, werr := w.writeThrough(p)
		w.written += int64(m)
		if werr != nil {
			w.err = werr
			return m, werr
		}
		if err != nil {
			return m, err
		}
		return n, nil
	case !w.headerSent && !w.chunked && len(w.pending)+len(p) <= BufferSize:
		if w.pendp == nil {
			w.pendp = bufPool.Get().(*[]byte)
			w.pending = (*w.pendp)[:0]
		}
		w.pending = append(w.pending, p...)
		w.written += int64(len(p))
		return len(p), nil
	default:
		if !w.headerSent {
			w.startStream()
		}
		if w.closeDelim {
			m, err := w.bw.Write(p)
			w.written += int64(m)
			if err != nil {
				w.err = err
			}
			return m, err
		}
		w.writeChunk(p)
		w.written += int64(len(p))
		if w.err != nil {
			return 0, w.err
		}
		return len(p), nil
	}
}

// WriteString is Write for a string (io.StringWriter, as net/http's
// ResponseWriter), without copying s: Write only reads p and keeps no
// reference to it.
func (w *response) WriteString(s string) (int, error) {
	return w.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// startStream sends the header of a body of unknown length — chunked, or
// for an HTTP/1.0 client delimited by the close — and what was buffered.
func (w *response) startStream() {
	if w.http10 {
		w.closeDelim, w.closeAfter = true, true
		w.sendHeader()
		w.bw.Write(w.pending)
	} else {
		w.chunked = true
		w.sendHeader()
		w.writeChunk(w.pending)
	}
	w.pending = w.pending[:0]
}

// Flush sends the header (switching to chunked when the length is not
// known) and everything buffered.
func (w *response) Flush() {
	if w.cs.hijacked {
		return
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.headerSent {
		if w.cl < 0 && w.bodyAllowed {
			w.startStream()
		} else {
			w.sendHeader()
		}
	}
	if w.err == nil {
		w.err = w.bw.Flush()
	}
}

// FlushError is Flush reporting the write error (http.ResponseController).
func (w *response) FlushError() error {
	if w.cs.hijacked {
		return http.ErrHijacked
	}
	w.Flush()
	return w.err
}

// SetReadDeadline sets the connection's read deadline for the rest of the
// request (http.ResponseController); the body's ReadTimeout no longer
// applies to it. It may be called while another goroutine reads the body
// (full duplex): a read blocked or about to start gets the new deadline.
func (w *response) SetReadDeadline(t time.Time) error {
	return w.cs.fixReadDeadline(t)
}

// SetWriteDeadline sets the connection's write deadline
// (http.ResponseController).
func (w *response) SetWriteDeadline(t time.Time) error { return w.cs.c.SetWriteDeadline(t) }

// EnableFullDuplex is a no-op: the body can always be read while the
// response is written.
func (w *response) EnableFullDuplex() error { return nil }

// Hijack hands the connection to the handler (Upgrade, WebSocket): a
// header chosen with WriteHeader (101) is sent first; bytes the client
// sent after the head are replayed by the returned connection, which
// half-closes with CloseWrite (the connection itself when there are none). Deadlines are cleared.
func (w *response) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	cs := w.cs
	if cs.hijacked {
		return nil, nil, http.ErrHijacked
	}
	if w.wroteHeader && !w.headerSent {
		w.sendHeader()
	}
	if err := w.bw.Flush(); err != nil {
		return nil, nil, err
	}
	cs.endWatch()
	cs.hijacked = true
	cs.handoffDeadline = time.Time{}
	_ = cs.c.SetDeadline(time.Time{})
	// With nothing to replay the connection itself is returned (plain
	// TCP keeps its file descriptor: a tunnel can read it through its
	// RawConn).
	rc := cs.c
	if cs.r < cs.w {
		rc = &replayconn.Conn{Conn: cs.c, Pending: append([]byte(nil), cs.buf[cs.r:cs.w]...)}
		cs.r = cs.w
	}
	cs.srv.state(cs.c, http.StateHijacked)
	// Small buffers: the caller reads and writes the connection itself.
	return rc, bufio.NewReadWriter(bufio.NewReaderSize(rc, 16), bufio.NewWriterSize(rc, 16)), nil
}

// finish completes the response after the handler returned.
func (w *response) finish() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.status == http.StatusSwitchingProtocols {
		w.closeAfter = true // switched, but nobody speaks the new protocol
	}
	if !w.headerSent {
		switch {
		case w.cl < 0 && !w.chunked && w.bodyAllowed:
			w.cl = int64(len(w.pending))
			w.header["Content-Length"] = []string{strconv.Itoa(len(w.pending))}
		case w.cl < 0 && w.req.Method == http.MethodHead && w.written > 0:
			w.header["Content-Length"] = []string{strconv.FormatInt(w.written, 10)}
		}
		w.sendHeader()
		if w.chunked {
			w.writeChunk(w.pending)
		} else if w.bodyAllowed {
			w.bw.Write(w.pending)
		}
		w.pending = w.pending[:0]
	}
	if w.chunked {
		w.bw.WriteString("0\r\n")
		w.writeTrailers()
		w.bw.WriteString("\r\n")
	}
	if w.cl >= 0 && w.bodyAllowed && w.written < w.cl {
		w.closeAfter = true
		w.err = errShortBody
	}
	if err := w.bw.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

var errShortBody = errors.New("h1: handler wrote less than its Content-Length")

func (w *response) writeChunk(p []byte) {
	if len(p) == 0 || w.err != nil {
		return
	}
	w.bw.WriteString(strconv.FormatInt(int64(len(p)), 16))
	w.bw.WriteString("\r\n")
	w.writeThrough(p)
	_, w.err = w.bw.WriteString("\r\n")
}
