package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gantry-proxy/gantry/dataplane/httpwire"
)

// ProtocolError is a response that breaks HTTP/1.1 framing or syntax
// (RFC 9112): it is never forwarded. Before the response head reached the
// client the proxy answers 502; after, the client's response is aborted.
// Err is the httpwire error behind it, when one is.
type ProtocolError struct {
	Msg string
	Err error
}

func (e *ProtocolError) Error() string { return "upstream: malformed response: " + e.Msg }
func (e *ProtocolError) Unwrap() error { return e.Err }

var errHeadTooLarge = &ProtocolError{Msg: "response head larger than the limit"}

func protoErr(format string, args ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...)}
}

// field is one header field line: its canonical name, its value, and the
// value as a one-element slice of capacity 1 for header maps. The strings
// and the slice are immutable and may be shared by many responses (a
// connection's fieldCache hands the same ones out while a backend sends
// the same field again), exactly as the headers middleware shares its
// values (append on a slice of capacity 1 copies).
type field struct {
	name, value string
	vals        []string
}

// cachedField is one entry of a connection's field cache: the field line
// as received, and the field made from it.
type cachedField struct {
	raw string // the whole line as received
	f   field
}

// maxCachedFields bounds a connection's field cache (by field position).
const maxCachedFields = 32

// body framings of a response (RFC 9112 §6.3).
const (
	bodyNone    = iota // HEAD, 1xx, 204, 304
	bodyLength         // Content-Length
	bodyChunked        // Transfer-Encoding: chunked
	bodyClose          // neither: the body ends when the server closes
)

// head is a parsed response head.
type head struct {
	status  int
	minor   int // HTTP/1.minor
	framing int
	length  int64 // bodyLength: bytes
	close   bool  // the connection must not be reused after this response
	trailer bool  // a Trailer field announces trailers
}

// readHead reads and parses one response head into h and pc.fields,
// strictly: CRLF line endings only, no obs-fold, no whitespace before a
// colon, token names, no CR/LF/NUL or other control bytes in values, one
// Content-Length of digits only, Transfer-Encoding exactly "chunked" and
// never together with Content-Length (RFC 9112 §2.2, §5, §6.1, §6.3).
// method is the request's, for the HEAD rule. A field line identical to
// the one at the same position in this connection's previous response
// reuses that response's strings, so a steady backend costs no allocation.
func (pc *pconn) readHead(h *head, method string, limit int) error {
	end := -1
	for {
		if i := bytes.Index(pc.buf[pc.r:pc.w], crlfcrlf); i >= 0 {
			end = pc.r + i + 4
			break
		}
		if pc.w-pc.r >= limit {
			return errHeadTooLarge
		}
		if err := pc.fill(limit + 4); err != nil {
			return err
		}
	}
	if end-pc.r > limit+4 {
		return errHeadTooLarge
	}
	b := pc.buf[pc.r : end-2] // every line with its CRLF
	pc.r = end
	return parseHead(b, h, method, pc)
}

var crlfcrlf = []byte("\r\n\r\n")

func parseHead(s []byte, h *head, method string, pc *pconn) error {
	*h = head{}
	pc.fields = pc.fields[:0]
	pc.conn = pc.conn[:0]
	line, rest, err := nextLine(s)
	if err != nil {
		return err
	}
	// status-line = HTTP-version SP status-code SP [ reason-phrase ]
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[7] < '0' || line[7] > '9' || line[8] != ' ' {
		return protoErr("bad status line %q", clip(string(line)))
	}
	h.minor = int(line[7] - '0')
	code := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return protoErr("bad status code in %q", clip(string(line)))
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 || code > 599 || (len(line) > 12 && line[12] != ' ') {
		return protoErr("bad status line %q", clip(string(line)))
	}
	for _, c := range line[12:] {
		if c < ' ' && c != '\t' || c == 0x7f {
			return protoErr("control byte in reason phrase")
		}
	}
	h.status = code
	sawCL, sawTE := false, false
	for i := 0; len(rest) > 0; i++ {
		line, rest, err = nextLine(rest)
		if err != nil {
			return err
		}
		f, err := pc.field(i, line)
		if err != nil {
			return err
		}
		switch f.name {
		case "Content-Length":
			if sawCL {
				return protoErr("more than one Content-Length")
			}
			sawCL = true
			n, ok := httpwire.ParseLength(f.value)
			if !ok {
				return protoErr("invalid Content-Length %q", clip(f.value))
			}
			h.length = n
		case "Transfer-Encoding":
			if sawTE {
				return protoErr("more than one Transfer-Encoding")
			}
			sawTE = true
			if !httpwire.EqualFold(f.value, "chunked") {
				return protoErr("unsupported Transfer-Encoding %q", clip(f.value))
			}
		case "Connection":
			for v := f.value; v != ""; {
				var t string
				t, v = httpwire.NextElement(v)
				switch {
				case httpwire.EqualFold(t, "close"):
					h.close = true
				case t != "" && !httpwire.EqualFold(t, "keep-alive"):
					pc.conn = append(pc.conn, t)
				}
			}
		case "Trailer":
			h.trailer = true
		}
		pc.fields = append(pc.fields, f)
	}
	if sawCL && sawTE {
		return protoErr("both Content-Length and Transfer-Encoding")
	}
	if sawTE && h.minor == 0 {
		return protoErr("Transfer-Encoding in an HTTP/1.0 response")
	}
	if h.minor == 0 {
		h.close = true // no persistent connections with HTTP/1.0 backends
	}
	switch {
	case code < 200 || code == http.StatusNoContent || code == http.StatusNotModified || method == http.MethodHead:
		h.framing = bodyNone
	case sawTE:
		h.framing = bodyChunked
	case sawCL:
		h.framing = bodyLength
	default:
		h.framing = bodyClose
		h.close = true
	}
	return nil
}

// field returns the field of line, the i-th of its head: from the
// connection's cache when the same line came at position i last time.
func (pc *pconn) field(i int, line []byte) (field, error) {
	if i < len(pc.cache) && pc.cache[i].raw == string(line) {
		return pc.cache[i].f, nil
	}
	f, err := parseField(line)
	if err != nil {
		return field{}, err
	}
	f.vals = []string{f.value}[:1:1]
	if i < maxCachedFields {
		for len(pc.cache) <= i {
			pc.cache = append(pc.cache, cachedField{})
		}
		pc.cache[i] = cachedField{raw: string(line), f: f}
	}
	return f, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// nextLine splits off one CRLF-terminated line (httpwire.CutLine); s
// ends in CRLF, so a line without one has a bare LF.
func nextLine(s []byte) (line, rest []byte, err error) {
	line, n, err := httpwire.CutLine(s)
	if n == 0 {
		return nil, nil, wireErr(httpwire.ErrBareLF, line)
	}
	return line, s[n:], err
}

// parseField parses one field line of a response head or trailer section
// (httpwire.ParseField).
func parseField(line []byte) (field, error) {
	name, v, err := httpwire.ParseField(line)
	if err != nil {
		return field{}, wireErr(err, line)
	}
	return field{name: http.CanonicalHeaderKey(string(name)), value: string(v)}, nil
}

// wireErr is the *ProtocolError of an httpwire error on line.
func wireErr(err error, line []byte) error {
	return &ProtocolError{Msg: fmt.Sprintf("%s in %q", strings.TrimPrefix(err.Error(), "httpwire: "), clip(string(line))), Err: err}
}

// hopByHop reports the connection-specific fields of a response that a
// proxy must not relay (RFC 9110 §7.6.1), plus the fields the
// response's own Connection names (conn).
func hopByHop(name string, conn []string) bool {
	switch name {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Te", "Transfer-Encoding", "Upgrade", "Trailer", "Proxy-Authenticate":
		return true
	}
	for _, c := range conn {
		if strings.EqualFold(c, name) {
			return true
		}
	}
	return false
}

var errNoResponse = errors.New("upstream: connection closed before a response")
