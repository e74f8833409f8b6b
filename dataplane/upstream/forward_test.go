package upstream

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
)

// recorder is a ResponseWriter that keeps informational responses, the
// final status, the body and the trailers, and supports Flush.
type recorder struct {
	mu      sync.Mutex
	header  http.Header
	infos   []int
	infoHdr []http.Header
	status  int
	body    strings.Builder
	flushes int
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (w *recorder) Header() http.Header { return w.header }
func (w *recorder) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if code < 200 && code != 101 {
		w.infos = append(w.infos, code)
		w.infoHdr = append(w.infoHdr, w.header.Clone())
		return
	}
	if w.status == 0 {
		w.status = code
	}
}
func (w *recorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status = 200
	}
	return w.body.Write(p)
}
func (w *recorder) Flush() { w.mu.Lock(); w.flushes++; w.mu.Unlock() }

// countingListener counts accepted connections, to prove keep-alive reuse.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func newBackend(t *testing.T, h http.Handler) (*httptest.Server, *countingListener) {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	cl := &countingListener{Listener: s.Listener}
	s.Listener = cl
	s.Start()
	t.Cleanup(s.Close)
	return s, cl
}

// rawBackend serves each accepted connection with fn; it returns host:port.
func rawBackend(t *testing.T, fn func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go fn(c)
		}
	}()
	return ln.Addr().String()
}

// answer serves one request per connection with the raw response resp.
func answer(resp string) func(c net.Conn) {
	return func(c net.Conn) {
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, resp)
	}
}

func testClient(o Options) *Client {
	if o.ResponseHeaderTimeout == 0 {
		o.ResponseHeaderTimeout = 2 * time.Second
	}
	return New(o)
}

func forward(t *testing.T, c *Client, addr string, r *http.Request) (*recorder, Result) {
	t.Helper()
	w := newRecorder()
	ob := &Outbound{Req: r, ClientIP: "192.0.2.1"}
	if r.Host != "" {
		ob.Host = r.Host
	}
	res := c.Host("http", addr).Forward(w, ob)
	return w, res
}

func hostOf(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

func TestRequestHeadAndKeepAlive(t *testing.T) {
	var got atomic.Value
	s, cl := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(fmt.Sprintf("%s %s host=%s xff=%s x=%s ws=%v te=%q conn=%q ka=%q ua=%q body=%s cl=%d",
			r.Method, r.URL.RequestURI(), r.Host, r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Internal-Auth"),
			r.Header["Sec-WebSocket-Key"] != nil, r.Header.Get("Te"), r.Header.Get("Connection"), r.Header.Get("Keep-Alive"),
			r.Header.Get("User-Agent"), b, r.ContentLength))
		io.WriteString(w, "ok")
	}))
	c := testClient(Options{})
	for _, tc := range []struct{ method, body, want string }{
		{"GET", "", `GET /p?a=1&b=2 host=example.test xff=203.0.113.9, 192.0.2.1 x=gateway ws=false te="trailers" conn="" ka="" ua="" body= cl=0`},
		{"POST", "hello", `POST /p?a=1&b=2 host=example.test xff=203.0.113.9, 192.0.2.1 x=gateway ws=false te="trailers" conn="" ka="" ua="" body=hello cl=5`},
		{"DELETE", "", `DELETE /p?a=1&b=2 host=example.test xff=203.0.113.9, 192.0.2.1 x=gateway ws=false te="trailers" conn="" ka="" ua="" body= cl=0`},
	} {
		var body io.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		}
		r := httptest.NewRequest(tc.method, "http://example.test/p?a=1;b=2", body)
		r.Header.Set("X-Forwarded-For", "203.0.113.9")
		// A middleware-added header named in the client's Connection list
		// reaches the backend (case 028): the client's hop-by-hop fields
		// are removed on arrival, never here.
		r.Header.Set("X-Internal-Auth", "gateway")
		r.Header.Set("Te", "trailers")
		r.Header.Set("Connection", "X-Internal-Auth")
		r.Header.Set("Keep-Alive", "timeout=5")
		w, res := forward(t, c, hostOf(s), r)
		if res.Err != nil || w.status != 200 || w.body.String() != "ok" {
			t.Fatalf("%s: %d %q %v", tc.method, w.status, w.body.String(), res.Err)
		}
		if g := got.Load().(string); g != tc.want {
			t.Fatalf("backend saw\n %s\nwant\n %s", g, tc.want)
		}
	}
	if n := cl.n.Load(); n != 1 {
		t.Fatalf("backend accepted %d connections for 3 sequential requests, want 1 (keep-alive)", n)
	}
}

// Responses that break RFC 9112 framing are never forwarded: nothing is
// written to the client (502 by the caller), and the connection is closed.
func TestMalformedResponsesAreProtocolErrors(t *testing.T) {
	c := testClient(Options{MaxResponseHeaderBytes: 1024})
	for _, tc := range []struct{ name, resp string }{
		{"two content-lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok"},
		{"conflicting content-lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!"},
		{"content-length list", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok"},
		{"signed content-length", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok"},
		{"cl and te", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"},
		{"te not chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx"},
		{"te in http/1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
		{"obs-fold", "HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n"},
		{"bare lf", "HTTP/1.1 200 OK\nContent-Length: 0\n\n\r\n\r\n"},
		{"space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n"},
		{"nul in value", "HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 0\r\n\r\n"},
		{"bad status line", "HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n"},
		{"not http", "SSH-2.0-OpenSSH\r\n\r\n"},
		{"head over the limit", "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 2048) + "\r\nContent-Length: 0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := rawBackend(t, answer(tc.resp))
			r := httptest.NewRequest("GET", "http://x.test/", nil)
			w, res := forward(t, c, addr, r)
			if _, ok := errors.AsType[*ProtocolError](res.Err); !ok || res.Sent {
				t.Fatalf("got err %v sent %v, want a *ProtocolError before anything was sent", res.Err, res.Sent)
			}
			if w.status != 0 || w.body.Len() != 0 {
				t.Fatalf("the client got %d %q", w.status, w.body.String())
			}
		})
	}
}

// A body that ends early, or a chunked body cut before its last chunk,
// is reported after the head was sent (the caller aborts the client's
// response); the connection is never reused.
func TestTruncatedBodiesAreErrorsAfterTheHead(t *testing.T) {
	c := testClient(Options{})
	for _, tc := range []struct{ name, resp string }{
		{"short content-length", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b"},
		{"chunked cut after a chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"},
		{"chunked cut inside a chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nhello"},
		{"chunked bad size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0x1\r\nz\r\n0\r\n\r\n"},
		{"chunk without crlf", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n"},
		{"space after a size, no extension", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1 \r\nz\r\n0\r\n\r\n"},
		{"malformed chunk extension", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;a b\r\nz\r\n0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := rawBackend(t, answer(tc.resp))
			w, res := forward(t, c, addr, httptest.NewRequest("GET", "http://x.test/", nil))
			if res.Err == nil || !res.Sent || res.Status != 200 || w.status != 200 {
				t.Fatalf("got status %d err %v sent %v, want an error after the 200 head", w.status, res.Err, res.Sent)
			}
		})
	}
}

// The chunk extension has bad whitespace before ";" and around "=": RFC
// 9112 §7.1.1 allows it (httpwire.ParseChunkLine), as h1 does.
func TestChunkedTrailersAndHopByHopFields(t *testing.T) {
	addr := rawBackend(t, answer("HTTP/1.1 200 OK\r\nConnection: X-Secret\r\nX-Secret: s\r\nKeep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\n"+
		"Trailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6 ;ext=1\t; q = \"x y\"\r\n world\r\n0\r\nX-Sum: 42\r\n\r\n"))
	w, res := forward(t, testClient(Options{}), addr, httptest.NewRequest("GET", "http://x.test/", nil))
	if res.Err != nil || w.body.String() != "hello world" {
		t.Fatalf("got %q %v", w.body.String(), res.Err)
	}
	if got := w.header.Get(http.TrailerPrefix + "X-Sum"); got != "42" {
		t.Errorf("trailer X-Sum = %q, want 42 (header %v)", got, w.header)
	}
	if got := w.header.Get("Trailer"); got != "X-Sum" {
		t.Errorf("Trailer announcement = %q", got)
	}
	for _, k := range []string{"Connection", "X-Secret", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding"} {
		if _, ok := w.header[k]; ok {
			t.Errorf("hop-by-hop %s relayed", k)
		}
	}
}

// The response-header timeout is a timeout whether the backend sent
// nothing or part of its head (issue 12: the latter was a 502).
func TestResponseHeaderTimeoutWithPartialHead(t *testing.T) {
	for _, partial := range []string{"", "HTTP/1.1 200 OK\r\nX-Slow: "} {
		addr := rawBackend(t, func(c net.Conn) {
			defer c.Close()
			http.ReadRequest(bufio.NewReader(c))
			io.WriteString(c, partial)
			time.Sleep(2 * time.Second)
		})
		c := New(Options{ResponseHeaderTimeout: 100 * time.Millisecond})
		_, res := forward(t, c, addr, httptest.NewRequest("GET", "http://x.test/", nil))
		ne, ok := errors.AsType[net.Error](res.Err)
		if !ok || !ne.Timeout() || res.Sent {
			t.Fatalf("partial %q: got %v (sent %v), want a timeout before anything was sent", partial, res.Err, res.Sent)
		}
	}
}

func TestInformationalResponsesRelayed(t *testing.T) {
	addr := rawBackend(t, answer("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"+
		"HTTP/1.1 100 Continue\r\n\r\n"+
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	w, res := forward(t, testClient(Options{}), addr, httptest.NewRequest("GET", "http://x.test/", nil))
	if res.Err != nil || w.status != 200 || w.body.String() != "ok" {
		t.Fatalf("got %d %q %v", w.status, w.body.String(), res.Err)
	}
	// 100 is relayed only to a client that asked for it.
	if len(w.infos) != 1 || w.infos[0] != 103 || w.infoHdr[0].Get("Link") != "</a.css>; rel=preload" {
		t.Fatalf("informational responses %v %v, want one 103 with its Link", w.infos, w.infoHdr)
	}
	if _, ok := w.header["Link"]; ok {
		t.Fatal("the 103's Link leaked into the final response")
	}
	if res.TTFB <= 0 {
		t.Fatal("no TTFB recorded")
	}
}

// An early final response (413) to a large upload reaches the caller while
// the body is still being written; the upload stops and the connection is
// not reused. The backend here never reads the body nor closes: writing
// the whole body before reading would deadlock.
func TestEarlyResponseStopsUpload(t *testing.T) {
	var conns atomic.Int64
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		conns.Add(1)
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 8\r\n\r\ntoo big!")
		time.Sleep(3 * time.Second)
	})
	c := testClient(Options{})
	for i := range 2 {
		r := httptest.NewRequest("POST", "http://x.test/up", io.LimitReader(neverEnding('x'), 64<<20))
		r.ContentLength = 64 << 20
		done := make(chan struct{})
		var w *recorder
		var res Result
		go func() { defer close(done); w, res = forward(t, c, addr, r) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("an early 413 did not come back while the upload was being written")
		}
		if res.Err != nil || w.status != 413 || w.body.String() != "too big!" {
			t.Fatalf("request %d: got %d %q %v, want a clean 413", i, w.status, w.body.String(), res.Err)
		}
	}
	if conns.Load() != 2 {
		t.Fatalf("%d connections for 2 uploads stopped early, want 2 (never reused)", conns.Load())
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// Expect: 100-continue is forwarded and the body held: a backend that
// answers 401 without 100 never receives the body; one that sends 100 gets
// it, and the client gets the 100.
func TestExpectContinue(t *testing.T) {
	var bodyBytes atomic.Int64
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if r.Header.Get("Expect") != "100-continue" {
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 9\r\n\r\nno expect")
			return
		}
		if r.URL.Path == "/deny" {
			io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nContent-Length: 4\r\n\r\nauth")
			c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			n, _ := io.Copy(io.Discard, br)
			bodyBytes.Add(n)
			return
		}
		io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
	})
	c := testClient(Options{ExpectContinueTimeout: 5 * time.Second})
	r := httptest.NewRequest("PUT", "http://x.test/deny", strings.NewReader("secret body"))
	r.Header.Set("Expect", "100-continue")
	w, res := forward(t, c, addr, r)
	if res.Err != nil || w.status != 401 || w.body.String() != "auth" {
		t.Fatalf("deny: got %d %q %v", w.status, w.body.String(), res.Err)
	}
	if n := bodyBytes.Load(); n != 0 {
		t.Fatalf("the backend received %d body bytes after refusing without 100", n)
	}
	r = httptest.NewRequest("PUT", "http://x.test/ok", strings.NewReader("payload"))
	r.Header.Set("Expect", "100-continue")
	w, res = forward(t, c, addr, r)
	if res.Err != nil || w.status != 200 || w.body.String() != "payload" {
		t.Fatalf("continue: got %d %q %v", w.status, w.body.String(), res.Err)
	}
	if len(w.infos) != 1 || w.infos[0] != 100 {
		t.Fatalf("the client's 100-continue was not relayed: %v", w.infos)
	}
}

func TestStaleKeepAliveConnectionIsRetried(t *testing.T) {
	var conns atomic.Int64
	closed := make(chan struct{}, 8)
	addr := rawBackend(t, func(c net.Conn) {
		defer func() { c.Close(); closed <- struct{}{} }()
		conns.Add(1)
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	})
	c := testClient(Options{})
	for i := range 3 {
		w, res := forward(t, c, addr, httptest.NewRequest("GET", "http://x.test/", nil))
		if res.Err != nil || w.body.String() != "ok" {
			t.Fatalf("request %d: %v", i, res.Err)
		}
		<-closed
	}
	if conns.Load() != 3 {
		t.Fatalf("got %d connections, want 3", conns.Load())
	}
}

// Bytes a backend sends beyond a response never become the next request's
// response.
func TestLeftoverBytesNeverReachTheNextRequest(t *testing.T) {
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			r, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			if r.Method == http.MethodHead {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 37\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nSECRET")
				continue
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	c := testClient(Options{})
	if _, res := forward(t, c, addr, httptest.NewRequest("HEAD", "http://x.test/a", nil)); res.Err != nil {
		t.Fatal(res.Err)
	}
	time.Sleep(50 * time.Millisecond) // the stray bytes are on their way: the point of the test
	w, res := forward(t, c, addr, httptest.NewRequest("GET", "http://x.test/b", nil))
	if res.Err != nil || w.body.String() != "ok" {
		t.Fatalf("second request got %q %v: another response's bytes", w.body.String(), res.Err)
	}
}

func TestContextCancelReturnsContextError(t *testing.T) {
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		http.ReadRequest(bufio.NewReader(c))
		time.Sleep(2 * time.Second)
	})
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequest("GET", "http://x.test/", nil).WithContext(ctx)
	time.AfterFunc(300*time.Millisecond, cancel) // after the probe: the watch path
	start := time.Now()
	_, res := forward(t, New(Options{}), addr, r)
	if !errors.Is(res.Err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("got %v after %v, want context.Canceled soon after the cancel", res.Err, time.Since(start))
	}
}

func TestRejectsInvalidHeaderValue(t *testing.T) {
	s, _ := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	r := httptest.NewRequest("GET", "http://x.test/", nil)
	r.Header["X-Bad"] = []string{"a\r\nInjected: 1"}
	if _, res := forward(t, testClient(Options{}), hostOf(s), r); !errors.Is(res.Err, errInvalidHeader) {
		t.Fatalf("got %v, want errInvalidHeader", res.Err)
	}
}

// h2c:// backends go through x/net/http2, trailers included (gRPC).
func TestH2CBackendWithTrailers(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "Grpc-Status")
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "proto=%s body=%s", r.Proto, b)
		w.Header().Set("Grpc-Status", "0")
		w.Header().Set(http.TrailerPrefix+"Grpc-Message", "fine")
		w.Header().Set(http.TrailerPrefix+"Grpc-Status-Details-Bin", "AAAA")
		w.Header().Set(http.TrailerPrefix+"X-Other", "1")
	})
	s := httptest.NewServer(h2c.NewHandler(h, &http2.Server{}))
	defer s.Close()
	c := testClient(Options{})
	r := httptest.NewRequest("POST", "http://x.test/svc", strings.NewReader("ping"))
	w := newRecorder()
	res := c.Host("h2c", hostOf(s)).Forward(w, &Outbound{Req: r})
	if res.Err != nil || w.body.String() != "proto=HTTP/2.0 body=ping" {
		t.Fatalf("got %d %q %v", w.status, w.body.String(), res.Err)
	}
	if w.header.Get(http.TrailerPrefix+"Grpc-Status") != "0" || w.header.Get(http.TrailerPrefix+"Grpc-Message") != "fine" ||
		w.header.Get(http.TrailerPrefix+"Grpc-Status-Details-Bin") != "AAAA" || w.header.Get(http.TrailerPrefix+"X-Other") != "1" {
		t.Fatalf("trailers not relayed: %v", w.header)
	}
}

func BenchmarkForward(b *testing.B) {
	body := strings.Repeat("x", 1024)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
	defer s.Close()
	c := New(Options{})
	h := c.Host("http", hostOf(s))
	r := httptest.NewRequest("GET", "http://x.test/", nil)
	w := newRecorder()
	ob := &Outbound{Req: r}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.header)
		w.body.Reset()
		w.status = 0
		*ob = Outbound{Req: r}
		if res := h.Forward(w, ob); res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}

// Idle connections older than IdleConnTimeout are closed by the reaper,
// so a backend that left keeps none open.
func TestIdleConnectionsAreReaped(t *testing.T) {
	closed := make(chan struct{}, 1)
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := br.ReadByte(); err == io.EOF {
			closed <- struct{}{}
		}
	})
	c := New(Options{IdleConnTimeout: 500 * time.Millisecond})
	defer c.Close()
	if _, res := forward(t, c, addr, httptest.NewRequest("GET", "http://x.test/", nil)); res.Err != nil {
		t.Fatal(res.Err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the idle connection was not closed after IdleConnTimeout")
	}
}

// https backends: ALPN picks HTTP/2 (through x/net/http2, one connection
// for many requests) or HTTP/1.1 (this package's client over TLS).
func TestHTTPSBackendsByALPN(t *testing.T) {
	for _, h2 := range []bool{true, false} {
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, r.Proto)
		}))
		s.EnableHTTP2 = true
		cl := &countingListener{Listener: s.Listener}
		s.Listener = cl
		s.StartTLS()
		defer s.Close()
		c := New(Options{TLS: &tls.Config{InsecureSkipVerify: true}, DisableHTTP2: !h2})
		defer c.Close()
		want := "HTTP/2.0"
		if !h2 {
			want = "HTTP/1.1"
		}
		host := c.Host("https", strings.TrimPrefix(s.URL, "https://"))
		for i := range 3 {
			w := newRecorder()
			res := host.Forward(w, &Outbound{Req: httptest.NewRequest("GET", "https://x.test/", nil)})
			if res.Err != nil || w.body.String() != want {
				t.Fatalf("h2=%v request %d: got %q %v, want %s", h2, i, w.body.String(), res.Err, want)
			}
		}
		if n := cl.n.Load(); n != 1 {
			t.Fatalf("h2=%v: %d connections for 3 requests, want 1", h2, n)
		}
	}
}

// A request body of unknown length goes chunked, with the client's
// trailers after it.
func TestChunkedRequestWithTrailers(t *testing.T) {
	var got atomic.Value
	s, _ := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(fmt.Sprintf("%s te=%v trailer=%s", b, r.TransferEncoding, r.Trailer.Get("X-Checksum")))
	}))
	r := httptest.NewRequest("POST", "http://x.test/", io.MultiReader(strings.NewReader("abc"), strings.NewReader("def")))
	r.ContentLength = -1
	r.Trailer = http.Header{"X-Checksum": nil}
	r.Body = &trailerBody{r: r, Reader: io.MultiReader(strings.NewReader("abc"), strings.NewReader("def"))}
	if _, res := forward(t, testClient(Options{}), hostOf(s), r); res.Err != nil {
		t.Fatal(res.Err)
	}
	if g, want := got.Load(), "abcdef te=[chunked] trailer=42"; g != want {
		t.Fatalf("backend saw %q, want %q", g, want)
	}
}

// trailerBody sets the request's trailer value at EOF, as a server does.
type trailerBody struct {
	io.Reader
	r *http.Request
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err == io.EOF {
		b.r.Trailer.Set("X-Checksum", "42")
	}
	return n, err
}
func (b *trailerBody) Close() error { return nil }

// An idle https connection the backend closed is not reused (the peek
// looks at the TCP socket under TLS), so even a request that cannot be
// replayed gets a fresh connection.
func TestHTTPSIdleConnectionClosedByBackend(t *testing.T) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	s.Config.IdleTimeout = 100 * time.Millisecond // closes idle keep-alive connections
	cl := &countingListener{Listener: s.Listener}
	s.Listener = cl
	s.StartTLS()
	defer s.Close()
	c := New(Options{TLS: &tls.Config{InsecureSkipVerify: true}, DisableHTTP2: true})
	defer c.Close()
	host := c.Host("https", strings.TrimPrefix(s.URL, "https://"))
	for i := range 2 {
		w := newRecorder()
		res := host.Forward(w, &Outbound{Req: httptest.NewRequest("POST", "https://x.test/", nil)})
		if res.Err != nil || w.body.String() != "ok" {
			t.Fatalf("request %d: %q %v", i, w.body.String(), res.Err)
		}
		time.Sleep(300 * time.Millisecond) // the backend closes the idle connection
	}
	if n := cl.n.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

// Every request field reaches an h2c:// backend with its values, in
// whatever case h2Request keeps its key (lower-case for the names x/net
// would lower-case per request, see outboundH2Name): a name present both
// canonical and lower-case keeps both lists, Te: trailers goes through,
// and Accept-Encoding stays what the client sent (x/net adds its own gzip
// only when it finds no canonical Accept-Encoding key). Response fields
// keep every value and add to those already set.
func TestH2CBackendGetsEveryField(t *testing.T) {
	var got http.Header
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header()["Set-Cookie"] = []string{"a=1", "b=2"}
		w.Header().Set("Vary", "Origin")
		io.WriteString(w, "ok")
	})
	s := httptest.NewServer(h2c.NewHandler(h, &http2.Server{}))
	defer s.Close()
	r := httptest.NewRequest("POST", "http://x.test/svc", strings.NewReader("ping"))
	sent := http.Header{
		"X-Forwarded-Host":     {"front.test"},
		"X-Forwarded-Port":     {"443"},
		"X-Forwarded-Server":   {"gantry-1"},
		"Grpc-Timeout":         {"10S"},
		"Grpc-Encoding":        {"identity"},
		"Grpc-Accept-Encoding": {"gzip"},
		"Traceparent":          {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		"Tracestate":           {"k=v"},
		"Te":                   {"trailers"},
		"Accept-Encoding":      {"identity"},
		"X-Other":              {"1", "2"},
	}
	r.Header = sent.Clone()
	r.Header["X-Real-Ip"] = []string{"192.0.2.1"}
	r.Header["x-real-ip"] = []string{"192.0.2.2"}
	w := newRecorder()
	w.header.Set("Vary", "Accept")
	res := testClient(Options{}).Host("h2c", hostOf(s)).Forward(w, &Outbound{Req: r, ClientIP: "198.51.100.7"})
	if res.Err != nil || w.body.String() != "ok" {
		t.Fatalf("got %d %q %v", w.status, w.body.String(), res.Err)
	}
	want := sent
	want["X-Forwarded-For"] = []string{"198.51.100.7"}
	for k, vs := range want {
		if !slices.Equal(got[k], vs) {
			t.Errorf("backend got %s %q, want %q", k, got[k], vs)
		}
	}
	if ips := got["X-Real-Ip"]; len(ips) != 2 || !slices.Contains(ips, "192.0.2.1") || !slices.Contains(ips, "192.0.2.2") {
		t.Errorf("backend got X-Real-Ip %q, want both values", ips)
	}
	if c := w.header["Set-Cookie"]; !slices.Equal(c, []string{"a=1", "b=2"}) {
		t.Errorf("client got Set-Cookie %q, want both cookies", c)
	}
	if v := w.header["Vary"]; !slices.Equal(v, []string{"Accept", "Origin"}) {
		t.Errorf("client got Vary %q, want the value set before and the backend's", v)
	}
}
