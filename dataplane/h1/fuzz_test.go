package h1

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Differential fuzzing against net/http's reader: whatever h1 accepts,
// net/http must accept and read identically; h1 may refuse more (it is
// stricter by design), never less. Seeds are in testdata/fuzz and run as
// unit tests.

func TestParseHeadAgreesWithStandardParser(t *testing.T) {
	for _, raw := range []string{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /x?y=%20 HTTP/1.1\r\nHost: a:8080\r\nX-A:  spaced  \r\nConnection: keep-alive, close\r\n\r\n",
		"POST http://h:1/p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-T, X-U\r\n\r\n",
		"GET /10 HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 12\r\n\r\n",
		"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /a/b-c_d.e~f$g&h+i,j:k;l=m@n?q=1&r HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /p? HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /p?? HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET //x/%41(y)?z HTTP/1.1\r\nHost: h\r\n\r\n",
	} {
		var h head
		if err := parseHead([]byte(raw), &h, DefaultMaxHeaders); err != nil {
			t.Fatalf("%q refused: %v", raw, err)
		}
		checkAgainstStd(t, []byte(raw))
	}
}

// checkAgainstStd asserts that whenever parseHead accepts b, net/http
// parses b to the same request.
func checkAgainstStd(t *testing.T, b []byte) {
	var h head
	if parseHead(b, &h, DefaultMaxHeaders) != nil {
		return
	}
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatalf("h1 accepted %q, net/http rejects it: %v", b, err)
	}
	if r.Method != h.method || r.RequestURI != h.target || r.Host != h.host || r.Close != h.close || r.ProtoMinor != h.minor ||
		r.ContentLength != h.contentLength || (len(r.TransferEncoding) > 0) != h.chunked || r.URL.String() != h.url.String() {
		t.Fatalf("%q: h1 %s %s host=%s close=%v minor=%d cl=%d chunked=%v url=%s; net/http %s %s host=%s close=%v minor=%d cl=%d te=%v url=%s",
			b, h.method, h.target, h.host, h.close, h.minor, h.contentLength, h.chunked, h.url,
			r.Method, r.RequestURI, r.Host, r.Close, r.ProtoMinor, r.ContentLength, r.TransferEncoding, r.URL)
	}
	su, hu := *r.URL, *h.url
	if su.User != nil || hu.User != nil || su.Scheme != hu.Scheme || su.Host != hu.Host || su.Opaque != hu.Opaque ||
		su.Path != hu.Path || su.RawPath != hu.RawPath || su.RawQuery != hu.RawQuery || su.ForceQuery != hu.ForceQuery {
		t.Fatalf("%q: URLs differ: h1 %#v, net/http %#v", b, hu, su)
	}
	// net/http deletes "Connection: close" on HTTP/1.1 and adds
	// Cache-Control for Pragma: no-cache (RFC 7234 compatibility); neither
	// changes the framing.
	std := r.Header.Clone()
	ours := h.header.Clone()
	if _, ok := std["Connection"]; !ok {
		delete(ours, "Connection")
	}
	if _, ok := ours["Cache-Control"]; !ok {
		delete(std, "Cache-Control")
	}
	if len(std) != len(ours) {
		t.Fatalf("%q: headers differ: h1 %v, net/http %v", b, ours, std)
	}
	for k, v := range std {
		if !slices.Equal(v, ours[k]) {
			t.Fatalf("%q: header %s: h1 %q, net/http %q", b, k, ours[k], v)
		}
	}
	delete(r.Trailer, "") // net/http keeps an empty name from "Trailer: a,,b"
	if len(r.Trailer) != len(h.trailer) {
		t.Fatalf("%q: declared trailers differ: h1 %v, net/http %v", b, h.trailer, r.Trailer)
	}
	for k := range r.Trailer {
		if _, ok := h.trailer[k]; !ok {
			t.Fatalf("%q: declared trailers differ: h1 %v, net/http %v", b, h.trailer, r.Trailer)
		}
	}
}

func FuzzParseHead(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"HEAD /p HTTP/1.1\r\nhost: a\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n",
		"DELETE /%41 HTTP/1.1\r\nHost: [::1]:80\r\nX-Y:\t\xff\r\n\r\n",
		"POST http://a/b HTTP/1.1\r\nHost: c\r\nTransfer-Encoding: chunked\r\nTrailer: X\r\n\r\n",
		"PUT / HTTP/1.0\r\nContent-Length: 5\r\nConnection: keep-alive\r\nExpect: 100-continue\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// The reader hands parseHead one whole head: up to the first
		// CRLF CRLF.
		if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
			b = b[:i+4]
		} else {
			b = append(b[:len(b):len(b)], "\r\n\r\n"...)
		}
		checkAgainstStd(t, b)
	})
}

// bytesConn is a net.Conn reading from a byte slice (for the body reader).
type bytesConn struct {
	net.Conn
	r io.Reader
}

func (c *bytesConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *bytesConn) SetReadDeadline(time.Time) error  { return nil }
func (c *bytesConn) SetWriteDeadline(time.Time) error { return nil }

const chunkedHead = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n"

// readChunkedBody reads b as a chunked body with h1's reader; it returns
// the body, the X-T trailer and whether it ended cleanly.
func readChunkedBody(b []byte) (got []byte, trailer string, ok bool) {
	s := &Server{}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	cs := &conn{srv: s, c: &bytesConn{r: bytes.NewReader(b)}, buf: *bp}
	r := &http.Request{Trailer: http.Header{"X-T": nil}}
	bd := &body{cs: cs, req: r, chunked: true, remain: -1}
	got, err := io.ReadAll(bd)
	return got, r.Trailer.Get("X-T"), err == nil
}

// bwsBeforeSemi matches a chunk-size line with whitespace before ";".
var bwsBeforeSemi = regexp.MustCompile(`(^|\n)[0-9A-Fa-f]+[ \t]+;`)

func FuzzChunkedBody(f *testing.F) {
	for _, s := range []string{
		"5\r\nhello\r\n0\r\n\r\n",
		"5;a=b\r\nhello\r\n0\r\nX-T: 1\r\n\r\n",
		"0x5\r\nhello\r\n0\r\n\r\n",
		"5\r\nhelloXX0\r\n\r\n",
		"1\r\na\r\n0\r\nX-T: a\r\n b\r\n\r\n",
		"A\r\n0123456789\r\n0\r\n\r\n",
		"5 ;a\r\nhello\r\n0\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		body, trailer, ok := readChunkedBody(b)
		if !ok {
			return
		}
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(chunkedHead + string(b))))
		if err != nil {
			t.Fatalf("net/http rejects the head: %v", err)
		}
		std, err := io.ReadAll(r.Body)
		if err != nil && bwsBeforeSemi.Match(b) {
			return // RFC 9112 §7.1.1 allows it, net/http refuses it (httpwire.ParseChunkLine)
		}
		if err != nil {
			t.Fatalf("h1 read the chunked body %q as %q, net/http fails: %v", b, body, err)
		}
		if !bytes.Equal(std, body) || r.Trailer.Get("X-T") != trailer {
			t.Fatalf("%q: h1 body %q trailer %q; net/http body %q trailer %q", b, body, trailer, std, r.Trailer.Get("X-T"))
		}
	})
}
