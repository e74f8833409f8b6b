package h1

import (
	"bytes"
	"net/http"
	"net/textproto"
	"net/url"

	"golang.org/x/net/http/httpguts"
)

// head is a parsed request head that the fast path will serve.
type head struct {
	method, target, host string
	url                  *url.URL
	close                bool
	header               http.Header
}

var (
	crlfcrlf      = []byte("\r\n\r\n")
	tokClose      = []byte("close")
	tokUpgrade    = []byte("upgrade")
	tokH2Settings = []byte("http2-settings")
)

// parseHead parses b, a request head ending with CRLF CRLF, into h. It
// returns false for anything the fast path does not serve (see the package
// doc); the caller then hands the connection to the standard library,
// which answers or rejects it by its own rules.
func parseHead(b []byte, h *head) bool {
	// request-line = method SP request-target SP HTTP-version CRLF (RFC 9112 §3)
	sp := bytes.IndexByte(b, ' ')
	if sp <= 0 || !isToken(b[:sp]) {
		return false
	}
	method := b[:sp]
	rest := b[sp+1:]
	sp = bytes.IndexByte(rest, ' ')
	if sp <= 0 || rest[0] != '/' {
		return false // origin-form only (§3.2.1)
	}
	target := rest[:sp]
	for _, c := range target {
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	rest = rest[sp+1:]
	if len(rest) < 10 || string(rest[:10]) != "HTTP/1.1\r\n" {
		return false
	}
	rest = rest[10:]
	switch string(method) {
	case "GET", "HEAD", "DELETE", "OPTIONS":
		// the methods whose bodyless form is the norm
	default:
		return false
	}
	h.method = methodString(method)
	h.target = string(target)
	h.header = make(http.Header, 8)
	hosts, fields := 0, 0
	for {
		eol := bytes.IndexByte(rest, '\n')
		if eol < 0 {
			return false
		}
		if eol == 0 || rest[eol-1] != '\r' {
			return false // bare LF (§2.2)
		}
		line := rest[:eol-1]
		rest = rest[eol+1:]
		if len(line) == 0 {
			break // end of the head
		}
		if fields++; fields > MaxHeaders {
			return false
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			return false // obs-fold, empty name, whitespace before colon (§5.1, §5.2)
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		for _, c := range value {
			if c < ' ' && c != '\t' || c == 0x7f {
				return false // CR, LF, NUL or another CTL (RFC 9110 §5.5)
			}
		}
		key := canonicalKey(name)
		switch key {
		case "Host":
			if hosts++; hosts > 1 || !httpguts.ValidHostHeader(string(value)) {
				return false
			}
			h.host = string(value)
			continue
		case "Content-Length":
			if string(value) != "0" || len(h.header["Content-Length"]) > 0 {
				return false
			}
		case "Transfer-Encoding", "Upgrade", "Expect", "Http2-Settings", "Te", "Trailer":
			return false
		case "Connection":
			for v := value; len(v) > 0; {
				tok := v
				if i := bytes.IndexByte(v, ','); i >= 0 {
					tok, v = v[:i], v[i+1:]
				} else {
					v = nil
				}
				tok = trimOWS(tok)
				switch {
				case bytes.EqualFold(tok, tokClose):
					h.close = true
				case bytes.EqualFold(tok, tokUpgrade), bytes.EqualFold(tok, tokH2Settings):
					return false
				}
			}
		}
		h.header[key] = append(h.header[key], string(value))
	}
	if hosts != 1 || len(rest) != 0 {
		return false
	}
	u, err := url.ParseRequestURI(h.target)
	if err != nil {
		return false // net/http answers it (400) by its own rules
	}
	h.url = u
	return true
}

func methodString(m []byte) string {
	switch string(m) {
	case "GET":
		return http.MethodGet
	case "HEAD":
		return http.MethodHead
	case "DELETE":
		return http.MethodDelete
	}
	return http.MethodOptions
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// isToken reports whether b is a non-empty RFC 9110 §5.6.2 token.
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !httpguts.IsTokenRune(rune(c)) {
			return false
		}
	}
	return true
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
		"Transfer-Encoding", "Upgrade", "Expect", "Http2-Settings", "Te", "Trailer",
		"Sec-Fetch-Dest", "Sec-Fetch-Mode", "Sec-Fetch-Site", "Dnt", "Range",
	} {
		m[k] = k
		m[string(bytes.ToLower([]byte(k)))] = k
	}
	return m
}()

func canonicalKey(b []byte) string {
	if k, ok := commonKeys[string(b)]; ok {
		return k
	}
	return textproto.CanonicalMIMEHeaderKey(string(b))
}
