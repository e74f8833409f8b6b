package upstream

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"regexp"
	"testing"
	"time"
)

// FuzzResponseHead checks the response-head parser differentially against
// net/http's reader: ours may refuse what net/http accepts, never the
// reverse, and when both accept they agree on the status and the framing
// (a length for Content-Length, chunked, or none), and on every field.
func FuzzResponseHead(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
		"HTTP/1.0 204 No Content\r\nX-A: b\r\n\r\n",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\n\r\n",
		"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
		"HTTP/1.1 200\r\nConnection: close, X-B\r\nX-B: 1\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		end := bytes.Index(in, crlfcrlf)
		if end < 0 {
			return
		}
		pc := &pconn{}
		var h head
		ours := parseHead(in[:end+2], &h, http.MethodGet, pc)
		resp, theirs := http.ReadResponse(bufio.NewReader(bytes.NewReader(in)), &http.Request{Method: http.MethodGet})
		if ours != nil {
			return // stricter is allowed
		}
		if theirs != nil {
			t.Fatalf("accepted %q that net/http refuses: %v", in, theirs)
		}
		defer resp.Body.Close()
		if resp.StatusCode != h.status {
			t.Fatalf("status %d, net/http %d for %q", h.status, resp.StatusCode, in)
		}
		if h.status >= 200 {
			switch h.framing {
			case bodyLength:
				if resp.ContentLength != h.length && h.status != 304 && h.status != 204 {
					t.Fatalf("length %d, net/http %d for %q", h.length, resp.ContentLength, in)
				}
			case bodyChunked:
				if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
					t.Fatalf("chunked, net/http %v for %q", resp.TransferEncoding, in)
				}
			}
		}
		for _, fl := range pc.fields {
			switch fl.name {
			case "Content-Length", "Transfer-Encoding", "Connection":
				continue // net/http consumes or normalises these
			}
			found := false
			for _, v := range resp.Header[fl.name] {
				if v == fl.value {
					found = true
				}
			}
			if !found && !(h.status < 200) {
				t.Fatalf("field %s: %q not in net/http's %q for %q", fl.name, fl.value, resp.Header[fl.name], in)
			}
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	})
}

// readerConn is a net.Conn reading from r (writes are discarded).
type readerConn struct {
	net.Conn
	r io.Reader
}

func (c readerConn) Read(p []byte) (int, error)      { return c.r.Read(p) }
func (c readerConn) SetReadDeadline(time.Time) error { return nil }
func (c readerConn) SetDeadline(time.Time) error     { return nil }
func (c readerConn) Write(p []byte) (int, error)     { return len(p), nil }

// smallReader returns at most max bytes per Read.
type smallReader struct {
	r   io.Reader
	max int
}

func (s *smallReader) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.max)]) }

// bwsBeforeSemi matches a chunk-size line with whitespace before ";".
var bwsBeforeSemi = regexp.MustCompile(`(^|\n)[0-9A-Fa-f]+[ \t]+;`)

// FuzzChunkedBody checks the chunked decoder against net/http's
// (httputil.NewChunkedReader): what ours decodes completely, net/http
// decodes to the same bytes.
func FuzzChunkedBody(f *testing.F) {
	for _, s := range []string{
		"5\r\nhello\r\n0\r\n\r\n",
		"3;ext=1\r\nabc\r\n0\r\nX-T: 1\r\n\r\n",
		"a\r\n0123456789\r\n2\r\nab\r\n0\r\n\r\n",
		"0\r\n\r\n",
		"5\r\nhello\r\n",
		"5\t;a = b\r\nhello\r\n0\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// Reads of at most 7 bytes cross chunk boundaries.
		pc := newPconn(readerConn{r: &smallReader{r: bytes.NewReader(in), max: 7}})
		w := newRecorder()
		pc.br = bodyReader{pc: pc, w: w, framing: bodyChunked, limit: 4096}
		if err := pc.br.relay(); err != nil {
			return // refused or truncated: stricter is allowed
		}
		want, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(in)))
		if err != nil && bwsBeforeSemi.Match(in) {
			return // RFC 9112 §7.1.1 allows it, net/http refuses it (httpwire.ParseChunkLine)
		}
		if err != nil {
			t.Fatalf("decoded %q that net/http refuses (%v): %q", w.body.String(), err, in)
		}
		if got := w.body.String(); got != string(want) {
			t.Fatalf("decoded %q, net/http %q, from %q", got, want, in)
		}
	})
}
