package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ProtocolError is a response that breaks HTTP/1.1 framing or syntax
// (RFC 9112): it is never forwarded. Before the response head reached the
// client the proxy answers 502; after, the client's response is aborted.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "upstream: malformed response: " + e.Msg }

var errHeadTooLarge = &ProtocolError{"response head larger than the limit"}

func protoErr(format string, args ...any) error {
	return &ProtocolError{fmt.Sprintf(format, args...)}
}

// field is one header field line; name is canonical, both are substrings
// of the head's one string (or of a trailer line's).
type field struct{ name, value string }

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
// method is the request's, for the HEAD rule.
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
			if err == errHeadTooLarge {
				return err
			}
			return err
		}
	}
	if end-pc.r > limit+4 {
		return errHeadTooLarge
	}
	s := string(pc.buf[pc.r : end-2]) // every line with its CRLF
	pc.r = end
	return parseHead(s, h, method, pc)
}

var crlfcrlf = []byte("\r\n\r\n")

func parseHead(s string, h *head, method string, pc *pconn) error {
	*h = head{}
	clear(pc.fields)
	pc.fields = pc.fields[:0]
	clear(pc.conn)
	pc.conn = pc.conn[:0]
	line, rest, err := nextLine(s)
	if err != nil {
		return err
	}
	// status-line = HTTP-version SP status-code SP [ reason-phrase ]
	if len(line) < 12 || line[:7] != "HTTP/1." || line[7] < '0' || line[7] > '9' || line[8] != ' ' {
		return protoErr("bad status line %q", clip(line))
	}
	h.minor = int(line[7] - '0')
	code := 0
	for _, c := range []byte(line[9:12]) {
		if c < '0' || c > '9' {
			return protoErr("bad status code in %q", clip(line))
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 || code > 599 || (len(line) > 12 && line[12] != ' ') {
		return protoErr("bad status line %q", clip(line))
	}
	for i := 12; i < len(line); i++ {
		if c := line[i]; c < ' ' && c != '\t' || c == 0x7f {
			return protoErr("control byte in reason phrase")
		}
	}
	h.status = code
	sawCL, sawTE := false, false
	for rest != "" {
		line, rest, err = nextLine(rest)
		if err != nil {
			return err
		}
		f, err := parseField(line)
		if err != nil {
			return err
		}
		switch f.name {
		case "Content-Length":
			if sawCL {
				return protoErr("more than one Content-Length")
			}
			sawCL = true
			n, ok := parseLength(f.value)
			if !ok {
				return protoErr("invalid Content-Length %q", clip(f.value))
			}
			h.length = n
		case "Transfer-Encoding":
			if sawTE {
				return protoErr("more than one Transfer-Encoding")
			}
			sawTE = true
			if !strings.EqualFold(f.value, "chunked") {
				return protoErr("unsupported Transfer-Encoding %q", clip(f.value))
			}
		case "Connection":
			for v := f.value; v != ""; {
				var t string
				t, v, _ = strings.Cut(v, ",")
				t = strings.TrimSpace(t)
				switch {
				case strings.EqualFold(t, "close"):
					h.close = true
				case t != "" && !strings.EqualFold(t, "keep-alive"):
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

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// nextLine splits off one CRLF-terminated line; a bare LF or CR is an error.
func nextLine(s string) (line, rest string, err error) {
	i := strings.IndexByte(s, '\n')
	if i < 1 || s[i-1] != '\r' {
		return "", "", protoErr("line not terminated by CRLF")
	}
	return s[:i-1], s[i+1:], nil
}

// parseField parses "name: value" strictly (see readHead).
func parseField(line string) (field, error) {
	colon := strings.IndexByte(line, ':')
	if colon <= 0 {
		if line != "" && (line[0] == ' ' || line[0] == '\t') {
			return field{}, protoErr("obs-fold line")
		}
		return field{}, protoErr("field line without a name")
	}
	name := line[:colon]
	for i := 0; i < len(name); i++ {
		if !isTokenByte(name[i]) {
			return field{}, protoErr("invalid field name %q", clip(name))
		}
	}
	v := line[colon+1:]
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return field{}, protoErr("control byte in the value of %s", clip(name))
		}
	}
	return field{name: http.CanonicalHeaderKey(name), value: v}, nil
}

func parseLength(v string) (int64, bool) {
	if v == "" || len(v) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// tokenTable marks tchar (RFC 9110 §5.6.2).
var tokenTable = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

func isTokenByte(c byte) bool { return tokenTable[c] }

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
