package upstream

import (
	"bytes"
	"errors"
	"io"
	"net/http"
)

// maxChunkLine bounds a chunk-size line (with extensions) and a trailer line.
const maxChunkLine = 4 << 10

// bodyReader reads a response body off a pconn with the framing of its
// head: Content-Length bytes exactly, chunked to its last chunk and
// trailer section, or until the server closes. A body that ends early is
// io.ErrUnexpectedEOF (or the read error); bad chunking is a
// *ProtocolError. Buffered bytes are handed out in place (no copy);
// next(scratch) reads from the socket into scratch only when the buffer
// is empty.
type bodyReader struct {
	pc      *pconn
	framing int
	left    int64 // bodyLength: bytes left; bodyChunked: bytes left in the current chunk
	state   int   // chunked: chunkSize, chunkData, chunkEnd, done
	limit   int   // trailer section limit (bytes)
	tbytes  int

	// Before each read that may wait for the backend, what was written to
	// w (dirty) is flushed, so a stream goes out as it is produced and a
	// body that arrived whole leaves with its head in one write.
	w        http.ResponseWriter
	dirty    bool
	flushErr error
}

// wait flushes w before a read that may block; a flush failure (the
// client went away) is returned as errFlush.
func (b *bodyReader) wait() error {
	if !b.dirty || b.w == nil {
		return nil
	}
	b.dirty = false
	if err := http.NewResponseController(b.w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		b.flushErr = err
		return err
	}
	return nil
}

const (
	chunkSize = iota
	chunkData
	chunkEnd
	chunkDone
)

// next returns the next piece of body, io.EOF at its clean end.
func (b *bodyReader) next(scratch []byte) ([]byte, error) {
	pc := b.pc
	switch b.framing {
	case bodyNone:
		return nil, io.EOF
	case bodyLength:
		if b.left == 0 {
			return nil, io.EOF
		}
		return b.data(scratch)
	case bodyClose:
		if pc.r < pc.w {
			p := pc.buf[pc.r:pc.w]
			pc.r = pc.w
			return p, nil
		}
		if err := b.wait(); err != nil {
			return nil, err
		}
		n, err := pc.read(scratch)
		if n > 0 {
			return scratch[:n], nil
		}
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, err
	}
	for {
		switch b.state {
		case chunkDone:
			return nil, io.EOF
		case chunkSize:
			line, err := b.line()
			if err != nil {
				return nil, err
			}
			n, err := parseChunkSize(line)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				if err := b.readTrailers(); err != nil {
					return nil, err
				}
				b.state = chunkDone
				return nil, io.EOF
			}
			b.left, b.state = n, chunkData
		case chunkData:
			p, err := b.data(scratch)
			if b.left == 0 {
				b.state = chunkEnd
			}
			return p, err
		case chunkEnd:
			line, err := b.line()
			if err != nil {
				return nil, err
			}
			if len(line) != 0 {
				return nil, protoErr("chunk data not followed by CRLF")
			}
			b.state = chunkSize
		}
	}
}

// data returns up to b.left bytes: buffered ones first, else one read.
func (b *bodyReader) data(scratch []byte) ([]byte, error) {
	pc := b.pc
	if pc.r < pc.w {
		n := min(int64(pc.w-pc.r), b.left)
		p := pc.buf[pc.r : pc.r+int(n)]
		pc.r += int(n)
		b.left -= n
		return p, nil
	}
	if err := b.wait(); err != nil {
		return nil, err
	}
	m := min(int64(len(scratch)), b.left)
	n, err := pc.read(scratch[:m])
	b.left -= int64(n)
	if n > 0 {
		return scratch[:n], nil
	}
	if err == io.EOF || err == nil {
		err = io.ErrUnexpectedEOF
	}
	return nil, err
}

// line returns the next CRLF-terminated line of the chunked framing,
// without its CRLF, reading more as needed.
func (b *bodyReader) line() ([]byte, error) {
	pc := b.pc
	for {
		if i := bytes.IndexByte(pc.buf[pc.r:pc.w], '\n'); i >= 0 {
			l := pc.buf[pc.r : pc.r+i]
			pc.r += i + 1
			if len(l) == 0 || l[len(l)-1] != '\r' {
				return nil, protoErr("chunked line not terminated by CRLF")
			}
			return l[:len(l)-1], nil
		}
		if pc.w-pc.r >= maxChunkLine {
			return nil, protoErr("chunk line too long")
		}
		if err := b.wait(); err != nil {
			return nil, err
		}
		if err := pc.fill(max(len(pc.buf), maxChunkLine+1)); err != nil {
			if err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// parseChunkSize parses chunk-size [ chunk-ext ] (RFC 9112 §7.1): 1 to 15
// hex digits, then optional extensions (BWS ";" ...) without control bytes.
func parseChunkSize(l []byte) (int64, error) {
	var n int64
	i := 0
	for ; i < len(l); i++ {
		c := l[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			goto ext
		}
		if i >= 15 {
			return 0, protoErr("chunk size too large")
		}
		n = n<<4 | int64(d)
	}
ext:
	if i == 0 {
		return 0, protoErr("invalid chunk size line %q", clip(string(l)))
	}
	rest := l[i:]
	for len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') {
		rest = rest[1:]
	}
	if len(rest) > 0 && rest[0] != ';' {
		return 0, protoErr("invalid chunk size line %q", clip(string(l)))
	}
	for _, c := range rest {
		if c < ' ' && c != '\t' || c == 0x7f {
			return 0, protoErr("control byte in chunk extension")
		}
	}
	return n, nil
}

// readTrailers reads the trailer section after the last chunk into
// pc.trailers, each field validated like a head field.
func (b *bodyReader) readTrailers() error {
	pc := b.pc
	clear(pc.trailers)
	pc.trailers = pc.trailers[:0]
	for {
		l, err := b.line()
		if err != nil {
			return err
		}
		if len(l) == 0 {
			return nil
		}
		if b.tbytes += len(l) + 2; b.tbytes > b.limit {
			return protoErr("trailer section larger than the limit")
		}
		f, err := parseField(l)
		if err != nil {
			return err
		}
		pc.trailers = append(pc.trailers, f)
	}
}
