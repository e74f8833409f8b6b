package h1

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// headOf returns a GET head of exactly n bytes (n >= 64).
func headOf(n int) string {
	const pre, post = "GET / HTTP/1.1\r\nHost: h\r\nX-Pad: ", "\r\n\r\n"
	return pre + strings.Repeat("p", n-len(pre)-len(post)) + post
}

// MaxHeaderBytes bounds the head exactly: a head of MaxHeaderBytes bytes
// (request line, fields and the empty line) is served, one byte more is
// 431 and the connection closed. Limits below and above the connection's
// first buffer (BufferSize) take the two paths of readHead.
func TestHeadLimitIsExact(t *testing.T) {
	for _, max := range []int{BufferSize / 2, BufferSize, 3 * BufferSize} {
		addr := startServer(t, &Server{
			Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") }),
			MaxHeaderBytes:    max,
			ReadHeaderTimeout: 2 * time.Second,
			IdleTimeout:       5 * time.Second,
		})
		for _, n := range []int{max - 1, max} {
			resps, _ := exchange(t, addr, headOf(n), 1)
			if len(resps) != 1 || !strings.HasPrefix(resps[0], "200 ") {
				t.Errorf("limit %d: a %d-byte head got %q, want 200", max, n, resps)
			}
		}
		for _, n := range []int{max + 1, max + 2} {
			resps, closed := exchange(t, addr, headOf(n), 1)
			if len(resps) != 1 || !strings.HasPrefix(resps[0], "431 ") || !closed {
				t.Errorf("limit %d: a %d-byte head got %q (closed %v), want 431 and the connection closed", max, n, resps, closed)
			}
		}
	}
}

// Heads whose framing or routing would be ambiguous are refused by the
// parser itself (RFC 9112 §6.1, §6.3, §3.2), whatever the smuggling
// vectors of the dataplane test: Content-Length with Transfer-Encoding, a
// repeated Host (even identical), a repeated Content-Length.
func TestParseHeadRefusesAmbiguousHeads(t *testing.T) {
	for _, tc := range []struct {
		raw    string
		status int
		reason string
	}{
		{"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both Content-Length and Transfer-Encoding"},
		{"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n", 400, "both Content-Length and Transfer-Encoding"},
		{"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both Content-Length and Transfer-Encoding"},
		{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "duplicate Host header"},
		{"GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", 400, "duplicate Host header"},
		{"GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\nHOST: a\r\n\r\n", 400, "duplicate Host header"},
		{"GET / HTTP/1.1\r\nX: 1\r\n\r\n", 400, "missing Host header"},
		{"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400, "repeated Content-Length"},
		{"POST / HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "Transfer-Encoding in an HTTP/1.0 request"},
		{"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 501, "unsupported transfer coding"},
		{"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chun\u212aed\r\n\r\n", 400, "Transfer-Encoding does not end in chunked"},
	} {
		var h head
		err := parseHead([]byte(tc.raw), &h, DefaultMaxHeaders)
		if err == nil || err.status != tc.status || err.reason != tc.reason {
			t.Errorf("%q: got %v, want %d %q", tc.raw, err, tc.status, tc.reason)
		}
	}
	// The unambiguous forms are served.
	for _, raw := range []string{
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: CHUNKED\r\n\r\n",
	} {
		var h head
		if err := parseHead([]byte(raw), &h, DefaultMaxHeaders); err != nil {
			t.Errorf("%q: refused: %v", raw, err)
		}
	}
}
