package h1

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/httpwire"
)

// Limits of request bodies (RFC 9112 §7.1). A chunk-size line, with its
// extensions, and each trailer line must fit the connection's read buffer
// (BufferSize; BodyBufferSize once the connection has sent a Content-Length
// body; MaxHeaderBytes after a large head) — net/http allows 4 KiB too; the trailer section as a whole is bounded by MaxHeaderBytes and
// MaxHeaders. maxDrain is how much of a body the handler left unread is
// read and discarded to keep the connection (net/http's 256 KiB).
const (
	maxDrain     = 256 << 10
	drainTimeout = 2 * time.Second
)

// Errors of a chunked body. A malformed chunk-size line or trailer field
// is the httpwire error, wrapped in errChunked.
var (
	errChunkEnd     = errors.New("h1: chunk data not followed by CRLF")
	errLineTooLong  = errors.New("h1: chunk line too long")
	errTrailerLarge = errors.New("h1: trailer section too large")
)

// chunkedError is a chunked body's framing error from httpwire (a bare
// LF, a bad chunk-size line, a bad trailer field).
type chunkedError struct{ err error }

func (e *chunkedError) Error() string { return "h1: chunked body: " + e.err.Error() }
func (e *chunkedError) Unwrap() error { return e.err }

// chunked-body states.
const (
	stSize = iota
	stData
	stDataEnd
	stTrailer
)

// body is a request body read from the connection's buffer and socket:
// Content-Length, or chunked with trailers (RFC 9112 §6, §7). It is the
// Request.Body of a request that has one. Reads are serialised; a Read may
// run on another goroutine than the handler (full duplex: the body is read
// while the response is written). The first Read of a request with Expect:
// 100-continue sends 100 Continue, unless a final response was started.
type body struct {
	mu      sync.Mutex
	cs      *conn
	req     *http.Request
	chunked bool
	state   int
	remain  int64 // bytes left in the body (Content-Length) or the chunk
	trailer int   // trailer bytes read so far
	fields  int   // trailer fields read so far
	expect  bool  // 100 Continue not sent yet
	done    bool  // the whole body was read
	closed  bool  // Close was called
	ended   bool  // the handler returned: reads fail
	err     error // sticky read error; the connection will close
}

// Read reads the body; at its end it returns io.EOF, and a body that the
// client cut short returns io.ErrUnexpectedEOF. Framing errors (bad chunk
// size, bare LF, bad trailer) are returned as errors and close the
// connection after the response.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.ended || b.closed:
		return 0, http.ErrBodyReadAfterClose
	case b.err != nil:
		return 0, b.err
	case b.done:
		return 0, io.EOF
	case len(p) == 0:
		return 0, nil
	}
	if b.expect {
		b.expect = false
		b.cs.sendContinue()
	}
	return b.read(p)
}

// Close marks the body closed; what is left is drained or the connection
// closed once the handler returns.
func (b *body) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}

func (b *body) read(p []byte) (int, error) {
	var n int
	var err error
	if b.chunked {
		n, err = b.readChunked(p)
	} else {
		n, err = b.readData(p)
		if err == nil && b.remain == 0 {
			b.done = true
			err = io.EOF
		}
	}
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// readData reads up to remain bytes of data: buffered ones first, then
// straight from the socket, never past the body (so a pipelined request
// stays unread).
func (b *body) readData(p []byte) (int, error) {
	cs := b.cs
	if int64(len(p)) > b.remain {
		p = p[:b.remain]
	}
	if cs.r < cs.w {
		n := copy(p, cs.buf[cs.r:cs.w])
		cs.r += n
		b.remain -= int64(n)
		return n, nil
	}
	cs.armRead()
	n, err := cs.c.Read(p)
	b.remain -= int64(n)
	if err != nil {
		if n > 0 && b.remain == 0 {
			return n, nil
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return n, err
	}
	return n, nil
}

func (b *body) readChunked(p []byte) (int, error) {
	for {
		switch b.state {
		case stSize:
			line, err := b.cs.readLine()
			if err != nil {
				return 0, err
			}
			size, err := httpwire.ParseChunkLine(line)
			if err != nil {
				return 0, &chunkedError{err}
			}
			if size == 0 {
				b.state = stTrailer
				continue
			}
			b.remain, b.state = size, stData
		case stData:
			n, err := b.readData(p)
			if b.remain == 0 {
				b.state = stDataEnd
			}
			return n, err
		case stDataEnd:
			line, err := b.cs.readLine()
			if err != nil {
				return 0, err
			}
			if len(line) != 0 {
				return 0, errChunkEnd
			}
			b.state = stSize
		case stTrailer:
			line, err := b.cs.readLine()
			if err != nil {
				return 0, err
			}
			if len(line) == 0 {
				b.done = true
				return 0, io.EOF
			}
			if err := b.addTrailer(line); err != nil {
				return 0, err
			}
		}
	}
}

// addTrailer parses one trailer field line with the rules of the head
// and merges it into Request.Trailer when the request declared trailers
// (as net/http does); framing and routing fields are dropped (RFC 9110
// §6.5.1).
func (b *body) addTrailer(line []byte) error {
	b.trailer += len(line) + 2
	b.fields++
	if b.trailer > b.cs.srv.maxHeaderBytes() || b.fields > b.cs.srv.maxHeaders() {
		return errTrailerLarge
	}
	name, value, err := httpwire.ParseField(line)
	if err != nil {
		return &chunkedError{err}
	}
	if b.req.Trailer == nil {
		return nil
	}
	key := canonicalKey(name, string(name))
	switch key {
	case "Content-Length", "Transfer-Encoding", "Trailer", "Host", "Connection", "Te", "Content-Type", "Authorization":
		return nil
	}
	b.req.Trailer[key] = append(b.req.Trailer[key], string(value))
	return nil
}

// readLine returns the next CRLF-terminated line from the connection
// (without the CRLF), reading as needed; the slice is valid until the next
// read. A bare LF (httpwire.CutLine), or a line longer than the buffer, is
// an error.
func (cs *conn) readLine() ([]byte, error) {
	for {
		line, n, err := httpwire.CutLine(cs.buf[cs.r:cs.w])
		if err != nil {
			return nil, &chunkedError{err}
		}
		if n > 0 {
			cs.r += n
			return line, nil
		}
		if cs.r == cs.w {
			cs.r, cs.w = 0, 0
		} else if cs.w == len(cs.buf) {
			if cs.r == 0 {
				return nil, errLineTooLong
			}
			cs.w = copy(cs.buf, cs.buf[cs.r:cs.w])
			cs.r = 0
		}
		cs.armRead()
		n, err = cs.c.Read(cs.buf[cs.w:])
		cs.w += n
		if n == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// finish ends the body once the handler returned, and reports whether the
// connection can serve another request: the body was read to its end, or
// what is left (at most maxDrain bytes, and only once 100 Continue was
// sent or not asked for) is read and discarded. A Read still blocked on
// another goroutine is cut by a past deadline.
func (b *body) finish() (keep bool) {
	if !b.mu.TryLock() {
		// A read is under way on another goroutine: cut it, and keep a
		// read about to start (armRead) from re-arming the deadline.
		_ = b.cs.fixReadDeadline(aLongTimeAgo)
		b.mu.Lock()
		b.ended = true
		b.mu.Unlock()
		return false
	}
	defer b.mu.Unlock()
	b.ended = true
	switch {
	case b.err != nil:
		return false
	case b.done:
		return true
	case b.expect:
		return false // the client may or may not send the body: close (RFC 9110 §10.1.1)
	case !b.chunked && b.remain > maxDrain:
		return false
	}
	cs := b.cs
	_ = cs.fixReadDeadline(time.Now().Add(drainTimeout)) // armRead must not extend it
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	drained := 0
	for drained <= maxDrain {
		n, err := b.read(*bp)
		drained += n
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
	return false
}

// unreadLeft reports, without waiting, whether the body still has bytes
// the handler did not read and that will not be drained (so the response
// should announce Connection: close). A body being read right now counts
// as being consumed.
func (b *body) unreadLeft() bool {
	if !b.mu.TryLock() {
		return false
	}
	defer b.mu.Unlock()
	return !b.done && (b.expect || !b.chunked && b.remain > maxDrain)
}
