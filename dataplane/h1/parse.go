package h1

import (
	"bytes"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/gantry-proxy/gantry/dataplane/httpwire"
	"golang.org/x/net/http/httpguts"
)

// head is a parsed request head.
type head struct {
	method, target, host string
	url                  *url.URL
	minor                int // 0 or 1 (HTTP/1.0, HTTP/1.1)
	header               http.Header
	// contentLength is the body length: -1 for chunked, 0 for none.
	contentLength int64
	chunked       bool
	// close: the client asked to close (Connection: close, or HTTP/1.0
	// without keep-alive); keepAlive10: HTTP/1.0 with Connection: keep-alive.
	close, keepAlive10 bool
	expectContinue     bool
	trailer            http.Header // declared Trailer names, nil if none
	mem                *headMem
}

// headMem holds what every request needs besides its header map, in one
// allocation: the URL and the backing array of up to 16 field values.
type headMem struct {
	url  url.URL
	vals [16]string
}

// headError is a request the server refuses: the status to answer (the
// connection is closed after it) and a short reason for the body.
type headError struct {
	status int
	reason string
}

func (e *headError) Error() string { return e.reason }

func badRequest(reason string) *headError {
	return &headError{status: http.StatusBadRequest, reason: reason}
}

var errH2Preface = &headError{status: http.StatusHTTPVersionNotSupported, reason: "HTTP/2 preface"}

// h2Preface is the request line and empty line that start an HTTP/2
// connection with prior knowledge (RFC 9113 §3.4): "PRI * HTTP/2.0".
const h2Preface = "PRI * HTTP/2.0\r\n\r\n"

// parseHead parses b, a whole request head (request line, field lines and
// the empty line, every line ending in CRLF), into h. It follows RFC 9112
// strictly and refuses, never repairs (reliability.md §3.1):
//
//   - request line: token method, one SP, a target of visible ASCII, one SP,
//     exactly HTTP/1.1 or HTTP/1.0 (other versions: 505); origin-form, or
//     absolute-form (r.Host is then its authority, §3.2.2), authority-form
//     only for CONNECT, "*" only for OPTIONS (§3.2);
//   - bare LF, obs-fold (a line starting with SP/HTAB), whitespace before
//     the colon, an empty or non-token name (§2.2, §5.1, §5.2): 400;
//   - CTL other than HTAB in a value, NUL, CR, DEL (RFC 9110 §5.5): 400;
//   - more than maxFields field lines: 431;
//   - Host missing (HTTP/1.1), repeated or invalid: 400 (§3.2);
//   - Content-Length not 1*DIGIT, repeated (even identical) or a list: 400
//     (§6.3); Transfer-Encoding with Content-Length, in HTTP/1.0, or empty:
//     400; a final coding other than chunked: 400; any coding besides a
//     single chunked: 501 (§6.1, §6.3);
//   - Expect other than 100-continue: 417 (RFC 9110 §10.1.1).
//
// Field values are substrings of one string holding the head (one
// allocation for all of them). h.header and h.mem, when set (the
// connection's, see reuse), are cleared and reused; else they are made.
func parseHead(b []byte, h *head, maxFields int) *headError {
	if string(b) == h2Preface {
		return errH2Preface
	}
	eol, sp1, sp2, herr := h.parseRequestLine(b)
	if herr != nil {
		return herr
	}
	// Count field lines first, so values share one backing array.
	fields := bytes.Count(b[eol+1:], []byte{'\n'}) - 1
	if fields < 0 {
		return badRequest("unterminated head")
	}
	if fields > maxFields {
		return &headError{status: http.StatusRequestHeaderFieldsTooLarge, reason: "too many header fields"}
	}
	s := string(b) // every string below is a substring of s
	h.method = methodString(b[:sp1], s[:sp1])
	h.target = s[sp1+1 : sp2]
	if h.header == nil {
		h.header = make(http.Header, fields)
	} else {
		clear(h.header) // the connection's map, reused (see reuse)
	}
	if h.mem == nil {
		h.mem = new(headMem) // the URL and (usually) the values: one allocation
	} else {
		*h.mem = headMem{}
	}
	var vals []string
	if fields <= len(h.mem.vals) {
		vals = h.mem.vals[:fields]
	} else {
		vals = make([]string, fields)
	}
	var fs fieldCounts
	h.contentLength = 0
	rest := eol + 1
	for i := 0; ; i++ {
		line, n, _ := httpwire.CutLine(b[rest:])
		if n == 0 {
			return badRequest("bare LF in header")
		}
		start := rest
		rest += n
		if len(line) == 0 {
			break // the empty line ending the head
		}
		name, value, err := httpwire.ParseField(line)
		if err != nil {
			return fieldError(err)
		}
		vs := cap(b) - cap(value) // value is a sub-slice of b
		key := canonicalKey(name, s[start:start+len(name)])
		v := s[vs : vs+len(value)]
		inHeader, herr := h.field(&fs, key, v, value)
		if herr != nil {
			return herr
		}
		if !inHeader {
			continue
		}
		if prev, ok := h.header[key]; ok {
			h.header[key] = append(prev, v)
			continue
		}
		vals[i] = v
		h.header[key] = vals[i : i+1 : i+1]
	}
	if rest != len(b) {
		return badRequest("bytes after the head")
	}
	if herr := h.framing(&fs); herr != nil {
		return herr
	}
	return h.parseTarget()
}

// parseRequestLine parses the request line of b (RFC 9112 §3): method
// SP request-target SP HTTP-version CRLF, and sets h.minor. It returns
// the index of the line's LF and of its two spaces.
func (h *head) parseRequestLine(b []byte) (eol, sp1, sp2 int, herr *headError) {
	eol = bytes.IndexByte(b, '\n')
	if eol < 1 || b[eol-1] != '\r' {
		return 0, 0, 0, badRequest("malformed request line")
	}
	line := b[:eol-1]
	sp1 = bytes.IndexByte(line, ' ')
	if sp1 <= 0 || !httpwire.IsToken(line[:sp1]) {
		return 0, 0, 0, badRequest("malformed method")
	}
	sp2 = bytes.IndexByte(line[sp1+1:], ' ')
	if sp2 <= 0 {
		return 0, 0, 0, badRequest("malformed request line")
	}
	sp2 += sp1 + 1
	target, version := line[sp1+1:sp2], line[sp2+1:]
	for _, c := range target {
		if c <= ' ' || c >= 0x7f {
			return 0, 0, 0, badRequest("invalid byte in request target")
		}
	}
	switch string(version) {
	case "HTTP/1.1":
		h.minor = 1
	case "HTTP/1.0":
		h.minor = 0
	default:
		if len(version) == 8 && string(version[:5]) == "HTTP/" && isDigit(version[5]) && version[6] == '.' && isDigit(version[7]) {
			return 0, 0, 0, &headError{status: http.StatusHTTPVersionNotSupported, reason: "HTTP version not supported"}
		}
		return 0, 0, 0, badRequest("malformed HTTP version")
	}
	return eol, sp1, sp2, nil
}

// fieldCounts is what parseHead counts across field lines for framing.
type fieldCounts struct {
	hosts, cls int      // Host and Content-Length lines
	te         []string // Transfer-Encoding values
}

// field applies the field key: v (value is v's bytes) to h: Host,
// Content-Length, Transfer-Encoding, Connection, Expect and Trailer are
// checked and recorded (see parseHead for the rules). inHeader is false
// for the fields that net/http keeps out of Request.Header (Host,
// Transfer-Encoding).
func (h *head) field(fs *fieldCounts, key, v string, value []byte) (inHeader bool, herr *headError) {
	switch key {
	case "Host":
		if fs.hosts++; fs.hosts > 1 {
			return false, badRequest("duplicate Host header")
		}
		if !httpguts.ValidHostHeader(v) {
			return false, badRequest("invalid Host header")
		}
		h.host = v
		return false, nil // r.Host, not a header field (as net/http)
	case "Content-Length":
		if fs.cls++; fs.cls > 1 {
			return false, badRequest("repeated Content-Length")
		}
		n, ok := httpwire.ParseLength(value)
		if !ok {
			return false, badRequest("invalid Content-Length")
		}
		h.contentLength = n
	case "Transfer-Encoding":
		fs.te = append(fs.te, v)
		return false, nil // r.TransferEncoding, not a header field (as net/http)
	case "Connection":
		forEachToken(value, func(tok []byte) {
			switch {
			case httpwire.EqualFold(tok, "close"):
				h.close = true
			case httpwire.EqualFold(tok, "keep-alive"):
				h.keepAlive10 = h.minor == 0
			}
		})
	case "Expect":
		if !httpwire.EqualFold(v, "100-continue") {
			return false, &headError{status: http.StatusExpectationFailed, reason: "unsupported expectation"}
		}
		h.expectContinue = h.minor == 1
	case "Trailer":
		var bad bool
		forEachToken(value, func(tok []byte) {
			k := textproto.CanonicalMIMEHeaderKey(string(tok))
			switch k {
			case "Transfer-Encoding", "Trailer", "Content-Length":
				bad = true // as net/http (RFC 9110 §6.5.1)
			}
			if h.trailer == nil {
				h.trailer = make(http.Header, 1)
			}
			h.trailer[k] = nil
		})
		if bad {
			return false, badRequest("forbidden trailer field declared")
		}
	}
	return true, nil
}

// framing decides the body framing and the connection's persistence from
// the fields counted (RFC 9112 §6.1, §6.3, §9.3).
func (h *head) framing(fs *fieldCounts) *headError {
	if h.minor == 1 && fs.hosts == 0 {
		return badRequest("missing Host header")
	}
	if fs.te != nil {
		if h.minor == 0 {
			return badRequest("Transfer-Encoding in an HTTP/1.0 request")
		}
		if fs.cls > 0 {
			return badRequest("both Content-Length and Transfer-Encoding")
		}
		if err := checkTransferEncoding(fs.te); err != nil {
			return err
		}
		h.chunked, h.contentLength = true, -1
		delete(h.header, "Trailer") // the names are in Request.Trailer (as net/http)
	} else {
		h.trailer = nil // trailers come only with chunked (RFC 9112 §7.1.2)
	}
	if h.minor == 0 && !h.keepAlive10 {
		h.close = true
	}
	if h.contentLength == 0 {
		h.expectContinue = false // nothing to wait for
	}
	return nil
}

// parseTarget parses h.target by its form (RFC 9112 §3.2).
func (h *head) parseTarget() *headError {
	t := h.target
	var err error
	switch {
	case t[0] == '/' && plainPath(t):
		// What url.ParseRequestURI returns for a path that needs no
		// unescaping (checked by FuzzParseHead), without its allocation.
		u := &h.mem.url
		if q := strings.IndexByte(t, '?'); q >= 0 {
			u.Path, u.RawQuery = t[:q], t[q+1:]
			u.ForceQuery = q == len(t)-1
		} else {
			u.Path = t
		}
		h.url = u
	case t[0] == '/':
		h.url, err = url.ParseRequestURI(t)
	case t == "*":
		if h.method != http.MethodOptions {
			return badRequest("asterisk-form is only for OPTIONS")
		}
		h.url = &url.URL{Path: "*"}
	case h.method == http.MethodConnect:
		// authority-form: host:port, parsed as net/http does.
		h.url, err = url.ParseRequestURI("http://" + t)
		if err == nil {
			if h.url.Path != "" || h.url.RawQuery != "" || h.url.User != nil {
				return badRequest("invalid CONNECT target")
			}
			h.url.Scheme = ""
		}
	default:
		h.url, err = url.ParseRequestURI(t)
		if err == nil && (h.url.Host == "" || h.url.Scheme != "http" && h.url.Scheme != "https") {
			return badRequest("invalid absolute-form target")
		}
		if err == nil && h.url.User != nil {
			return badRequest("userinfo in request target")
		}
	}
	if err != nil {
		return badRequest("invalid request target")
	}
	if h.url.Host != "" {
		h.host = h.url.Host // §3.2.2: the target's authority wins over Host
	}
	return nil
}

// plainPath reports whether the path of an origin-form target (up to '?')
// has only bytes that url.URL never escapes in a path: unreserved, "/" and
// "$&+,:;=@".
func plainPath(t string) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '/', c == '$', c == '&', c == '+', c == ',', c == ':', c == ';', c == '=', c == '@':
		case c == '?':
			return true
		default:
			return false
		}
	}
	return true
}

// checkTransferEncoding accepts exactly one coding, chunked (RFC 9112 §6.1,
// §7): a list whose last coding is not chunked cannot be framed (400); any
// other coding is one Gantry does not decode (501).
func checkTransferEncoding(te []string) *headError {
	var codings []string
	for _, v := range te {
		for c := range strings.SplitSeq(v, ",") {
			codings = append(codings, httpwire.TrimOWS(c))
		}
	}
	if len(codings) == 0 || !httpwire.EqualFold(codings[len(codings)-1], "chunked") {
		return badRequest("Transfer-Encoding does not end in chunked")
	}
	if len(codings) > 1 {
		return &headError{status: http.StatusNotImplemented, reason: "unsupported transfer coding"}
	}
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// forEachToken calls f with each non-empty, OWS-trimmed element of a
// comma-separated list (RFC 9110 §5.6.1).
func forEachToken(v []byte, f func([]byte)) {
	for len(v) > 0 {
		var tok []byte
		if tok, v = httpwire.NextElement(v); len(tok) > 0 {
			f(tok)
		}
	}
}

// fieldError is the answer to a field line httpwire.ParseField refuses.
func fieldError(err error) *headError {
	switch err {
	case httpwire.ErrObsFold:
		return badRequest("obs-fold in header")
	case httpwire.ErrFieldValue:
		return badRequest("invalid byte in header value")
	}
	return badRequest("malformed header field name")
}

// methodString returns the method, without allocating for the common ones.
func methodString(m []byte, sub string) string {
	switch string(m) {
	case "GET":
		return http.MethodGet
	case "HEAD":
		return http.MethodHead
	case "POST":
		return http.MethodPost
	case "PUT":
		return http.MethodPut
	case "DELETE":
		return http.MethodDelete
	case "OPTIONS":
		return http.MethodOptions
	case "PATCH":
		return http.MethodPatch
	case "CONNECT":
		return http.MethodConnect
	}
	return sub
}

// commonKeys maps the usual spellings of frequent field names to their
// canonical form, so that they cost no allocation.
var commonKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"Accept", "Accept-Encoding", "Accept-Language", "Authorization", "Cache-Control",
		"Connection", "Content-Length", "Content-Type", "Cookie", "Host", "If-Modified-Since",
		"If-None-Match", "Origin", "Pragma", "Referer", "User-Agent", "X-Forwarded-For",
		"X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Port", "X-Real-Ip", "X-Request-Id",
		"Transfer-Encoding", "Upgrade", "Expect", "Http2-Settings", "Te", "Trailer", "Keep-Alive",
		"Sec-Fetch-Dest", "Sec-Fetch-Mode", "Sec-Fetch-Site", "Dnt", "Range", "Proxy-Connection",
		"Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions", "Sec-Websocket-Protocol",
	} {
		m[k] = k
		m[strings.ToLower(k)] = k
	}
	return m
}()

// canonicalKey returns the canonical form of the field name b; sub is the
// same bytes as a string (returned when already canonical).
func canonicalKey(b []byte, sub string) string {
	if k, ok := commonKeys[string(b)]; ok {
		return k
	}
	return textproto.CanonicalMIMEHeaderKey(sub)
}
