package upstream

import (
	"errors"
	"io"
	"net/http"

	"github.com/gantry-proxy/gantry/dataplane/httpwire"
)

// maxChunkLine bounds a chunk-size line (with extensions) and a trailer line.
const maxChunkLine = 4 << 10

// minRead is the least free space a body read is given: below it, what
// was gathered is written to the client and the buffer compacted first.
const minRead = 4 << 10

// bodyReader relays a response body from a pconn to the client's writer
// with the framing of its head: Content-Length bytes exactly, chunked to
// its last chunk and trailer section, or until the server closes. A body
// that ends early is io.ErrUnexpectedEOF (or the read error); bad chunking
// is a *ProtocolError; a failed write or flush to the client is a
// *ClientWriteError.
//
// Costs: a body that needs more than the head's read runs on a 32 KiB
// buffer (from copyBufs, swapped in for the connection's 4 KiB one while
// the body lasts). Chunked framing is parsed in that buffer and the data
// of consecutive chunks is moved together in place, so what the backend
// sent in one burst reaches the client's writer as one Write (one chunk
// of the client's response) instead of one per backend chunk. The client
// is flushed only when a backend read finds nothing to read: on a plain
// TCP connection the read runs through the socket's RawConn and flushes
// in its would-block callback (no extra syscall, nothing flushed while
// more is already waiting); over TLS, where that cannot be seen, before
// every read. The head counts as written: the first body read that would
// wait flushes it (a head whose body comes later is never held back). A
// stream is thus delivered as it is produced, and a body
// that arrived whole leaves with its head in as few writes as it fits.
type bodyReader struct {
	pc      *pconn
	w       http.ResponseWriter
	framing int
	left    int64 // bodyLength: bytes left; bodyChunked: bytes left in the current chunk
	state   int   // chunked: chunkSize, chunkData, chunkEnd, chunkTrailer, chunkDone
	limit   int   // trailer section limit (bytes)
	tbytes  int

	// Chunked: data gathered for the client, moved together in place at
	// pc.buf[o0:o1] (o1 <= pc.r).
	o0, o1 int

	// big is the swapped-in 32 KiB buffer (nil: none); small the
	// connection's own, given back at the end.
	big   *[32 << 10]byte
	small []byte

	dirty bool  // written to w since the last flush
	err   error // a write or flush failure (*ClientWriteError), sticky
	reads int   // backend reads the body needed beyond the head's
}

// chunked-body states.
const (
	chunkSize = iota
	chunkData
	chunkEnd
	chunkTrailer
	chunkDone
)

// relay copies the body to b.w. It returns nil at the body's clean end.
// When the backend's body breaks (cut short, bad framing), what arrived
// intact before the break is still delivered and flushed — the client
// sees the head and those bytes, then the caller's abort (no last chunk,
// short of Content-Length, the connection closed), as nginx does — rather
// than an empty reply that looks like a proxy crash.
func (b *bodyReader) relay() (err error) {
	pc := b.pc
	defer func() {
		if err != nil && b.err == nil {
			b.blocked()
		}
		pc.wantBig = b.reads > 0
		b.release()
	}()
	switch b.framing {
	case bodyNone:
		return nil
	case bodyChunked:
		return b.relayChunked()
	}
	// Content-Length or close-delimited: what is buffered, then reads of
	// as much as fits, each written as it comes.
	for {
		if pc.r < pc.w {
			k := pc.w - pc.r
			if b.framing == bodyLength {
				k = int(min(int64(k), b.left))
				b.left -= int64(k)
			}
			b.write(pc.buf[pc.r : pc.r+k])
			pc.r += k
			if b.err != nil {
				return b.err
			}
		}
		if b.framing == bodyLength && b.left == 0 {
			return nil
		}
		b.grow()
		pc.r, pc.w = 0, 0
		p := pc.buf
		if b.framing == bodyLength {
			p = p[:min(int64(len(p)), b.left)]
		}
		n, err := b.read(p)
		pc.w = n
		if n > 0 {
			continue
		}
		switch {
		case b.err != nil:
			return b.err
		case err == io.EOF && b.framing == bodyClose:
			return nil
		case err == io.EOF || err == nil:
			return io.ErrUnexpectedEOF
		}
		return err
	}
}

// relayChunked relays a chunked body (RFC 9112 §7.1).
func (b *bodyReader) relayChunked() error {
	pc := b.pc
	b.o0, b.o1 = pc.r, pc.r
	for {
		done, err := b.parse()
		if err != nil {
			return err
		}
		if done {
			b.emit()
			return b.err
		}
		// More bytes are needed. Gathered data is written first when the
		// buffer has little room left; an empty output lets the unparsed
		// rest (at most a partial line) move to the front.
		b.grow()
		if b.o1 > b.o0 && len(pc.buf)-pc.w < minRead {
			b.emit()
			if b.err != nil {
				return b.err
			}
		}
		if b.o1 == b.o0 && pc.r > 0 {
			n := copy(pc.buf, pc.buf[pc.r:pc.w])
			pc.r, pc.w = 0, n
			b.o0, b.o1 = 0, 0
		}
		n, err := b.read(pc.buf[pc.w:])
		pc.w += n
		if n > 0 {
			continue
		}
		switch {
		case b.err != nil:
			return b.err
		case err == io.EOF || err == nil:
			return io.ErrUnexpectedEOF
		}
		return err
	}
}

// parse consumes what pc.buf[pc.r:pc.w] holds of the chunked framing,
// moving chunk data to the output. It reports done after the trailer
// section, or (false, nil) when more bytes are needed.
func (b *bodyReader) parse() (done bool, err error) {
	pc := b.pc
	for {
		switch b.state {
		case chunkDone:
			return true, nil
		case chunkSize, chunkTrailer:
			l, ok, err := b.line()
			if err != nil || !ok {
				return false, err
			}
			if b.state == chunkTrailer {
				if len(l) == 0 {
					b.state = chunkDone
					continue
				}
				if b.tbytes += len(l) + 2; b.tbytes > b.limit {
					return false, protoErr("trailer section larger than the limit")
				}
				f, err := parseField(l)
				if err != nil {
					return false, err
				}
				pc.trailers = append(pc.trailers, f)
				continue
			}
			n, err := httpwire.ParseChunkLine(l)
			if err != nil {
				return false, wireErr(err, l)
			}
			if n == 0 {
				b.state = chunkTrailer
				clear(pc.trailers)
				pc.trailers = pc.trailers[:0]
				continue
			}
			b.left, b.state = n, chunkData
		case chunkData:
			k := int(min(int64(pc.w-pc.r), b.left))
			if k == 0 {
				return false, nil
			}
			if b.o1 != pc.r {
				copy(pc.buf[b.o1:], pc.buf[pc.r:pc.r+k])
			}
			b.o1 += k
			pc.r += k
			if b.left -= int64(k); b.left == 0 {
				b.state = chunkEnd
			}
		case chunkEnd:
			avail := pc.buf[pc.r:pc.w]
			if len(avail) > 0 && avail[0] != '\r' || len(avail) > 1 && avail[1] != '\n' {
				return false, protoErr("chunk data not followed by CRLF")
			}
			if len(avail) < 2 {
				return false, nil
			}
			pc.r += 2
			b.state = chunkSize
		}
	}
}

// line returns the next CRLF-terminated line of the chunked framing in the
// buffer, without its CRLF; ok is false when it is not complete yet.
func (b *bodyReader) line() (l []byte, ok bool, err error) {
	pc := b.pc
	l, n, err := httpwire.CutLine(pc.buf[pc.r:pc.w])
	switch {
	case err != nil:
		return nil, false, wireErr(err, nil)
	case n == 0 && pc.w-pc.r >= maxChunkLine, n > maxChunkLine:
		return nil, false, protoErr("chunk line too long")
	case n == 0:
		return nil, false, nil
	}
	pc.r += n
	return l, true, nil
}

// emit writes the gathered chunk data to the client.
func (b *bodyReader) emit() {
	if b.o1 > b.o0 {
		b.write(b.pc.buf[b.o0:b.o1])
	}
	b.o0 = b.o1
}

// write writes p to the client (not flushed).
func (b *bodyReader) write(p []byte) {
	if b.err != nil || len(p) == 0 {
		return
	}
	if _, err := b.w.Write(p); err != nil {
		b.err = &ClientWriteError{err}
		return
	}
	b.dirty = true
}

// blocked runs when a backend read would wait: the gathered data goes to
// the client, and the client is flushed.
func (b *bodyReader) blocked() {
	if b.framing == bodyChunked {
		b.emit()
	}
	if !b.dirty || b.err != nil {
		return
	}
	b.dirty = false
	if err := http.NewResponseController(b.w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		b.err = &ClientWriteError{err}
	}
}

// read reads body bytes from the backend into p (len(p) > 0), flushing
// the client before waiting. It returns (0, nil) when the client failed
// (b.err) before anything was read.
func (b *bodyReader) read(p []byte) (int, error) {
	pc := b.pc
	b.reads++
	if pc.readFn == nil {
		// TLS: whether a read would wait is not known; flush first.
		b.blocked()
		if b.err != nil {
			return 0, nil
		}
		return pc.read(p)
	}
	pc.blk = b
	n, err := pc.read(p)
	pc.blk = nil
	if b.err != nil && n == 0 {
		return 0, nil
	}
	return n, err
}

// grow swaps the 32 KiB body buffer in for the connection's own, keeping
// the unread bytes and the gathered output (once per body).
func (b *bodyReader) grow() {
	pc := b.pc
	if b.big != nil || len(pc.buf) >= 32<<10 {
		return
	}
	b.big = copyBufs.Get().(*[32 << 10]byte)
	b.small = pc.buf
	start := pc.r
	if b.o0 < b.o1 {
		start = b.o0 // the output precedes the unread bytes
	}
	pc.w = copy(b.big[:], pc.buf[start:pc.w])
	pc.r -= start
	if b.o0 < b.o1 {
		b.o0, b.o1 = b.o0-start, b.o1-start
	} else {
		b.o0, b.o1 = pc.r, pc.r
	}
	pc.buf = b.big[:]
}

// release gives the connection its own buffer back. Bytes left unread
// beyond the body stay unread (as many as fit), so the connection is not
// reused.
func (b *bodyReader) release() {
	if b.big == nil {
		return
	}
	pc := b.pc
	pc.w = copy(b.small, pc.buf[pc.r:pc.w])
	pc.r = 0
	pc.buf = b.small
	copyBufs.Put(b.big)
	b.big, b.small = nil, nil
}
