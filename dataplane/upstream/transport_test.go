package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

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

func newTransport() *Transport {
	return New(http.DefaultTransport, Options{ResponseHeaderTimeout: 2 * time.Second})
}

func TestReusesConnectionsAndForwardsRequest(t *testing.T) {
	var got atomic.Value
	s, cl := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(fmt.Sprintf("%s %s host=%s x=%s ua=%q body=%s cl=%d te=%v", r.Method, r.URL.RequestURI(), r.Host, r.Header.Get("X-A"), r.Header.Get("User-Agent"), b, r.ContentLength, r.TransferEncoding))
		io.WriteString(w, "ok")
	}))
	tr := newTransport()
	tests := []struct {
		name, method, body string
		length             int64
		want               string
	}{
		{"get", "GET", "", 0, `GET /p?q=1 host=example.test x=1 ua="" body= cl=0 te=[]`},
		{"delete", "DELETE", "", 0, `DELETE /p?q=1 host=example.test x=1 ua="" body= cl=0 te=[]`},
		{"post empty", "POST", "", 0, `POST /p?q=1 host=example.test x=1 ua="" body= cl=0 te=[]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = io.NopCloser(strings.NewReader(tc.body))
			}
			r, _ := http.NewRequest(tc.method, s.URL+"/p?q=1", body)
			r.ContentLength = tc.length
			r.Host = "example.test"
			r.Header.Set("X-A", "1")
			r.Header.Set("User-Agent", "") // ReverseProxy's way of saying "send none"
			resp, err := tr.RoundTrip(r)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "ok" {
				t.Fatalf("body %q", b)
			}
			if g := got.Load().(string); g != tc.want {
				t.Fatalf("backend saw %q, want %q", g, tc.want)
			}
		})
	}
	if n := cl.n.Load(); n != 1 {
		t.Fatalf("backend accepted %d connections for %d sequential requests, want 1 (keep-alive)", n, len(tests))
	}
}

func TestHeadAnd204AndInformational(t *testing.T) {
	s, cl := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/103":
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			io.WriteString(w, "final")
		default:
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}
	}))
	tr := newTransport()
	for _, c := range []struct {
		method, path, want string
		status             int
	}{
		{"HEAD", "/", "", 200}, {"GET", "/204", "", 204}, {"GET", "/103", "final", 200}, {"GET", "/", "hello", 200},
	} {
		r, _ := http.NewRequest(c.method, s.URL+c.path, nil)
		resp, err := tr.RoundTrip(r)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || string(b) != c.want {
			t.Fatalf("%s %s: got %d %q, want %d %q", c.method, c.path, resp.StatusCode, b, c.status, c.want)
		}
	}
	if n := cl.n.Load(); n != 1 {
		t.Fatalf("accepted %d connections, want 1", n)
	}
}

func TestEarlyCloseDropsConnection(t *testing.T) {
	s, cl := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 1<<20))
	}))
	tr := newTransport()
	for range 2 {
		r, _ := http.NewRequest("GET", s.URL, nil)
		resp, err := tr.RoundTrip(r)
		if err != nil {
			t.Fatal(err)
		}
		io.CopyN(io.Discard, resp.Body, 10)
		resp.Body.Close() // unread body: the connection cannot be reused
	}
	if n := cl.n.Load(); n != 2 {
		t.Fatalf("accepted %d connections, want 2 (an abandoned body must not be reused)", n)
	}
}

// rawBackend serves each accepted connection with fn.
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
	return "http://" + ln.Addr().String()
}

func TestStaleKeepAliveConnectionIsRetried(t *testing.T) {
	var conns atomic.Int64
	closed := make(chan struct{}, 8)
	u := rawBackend(t, func(c net.Conn) {
		defer func() { c.Close(); closed <- struct{}{} }()
		conns.Add(1)
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		// then close without "Connection: close": the client's pooled
		// connection is stale.
	})
	tr := newTransport()
	for i := range 3 {
		r, _ := http.NewRequest("GET", u, nil)
		resp, err := tr.RoundTrip(r)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		<-closed // the server has closed the connection the pool now holds
	}
	if conns.Load() != 3 {
		t.Fatalf("got %d connections, want 3", conns.Load())
	}
}

// Requests with a body go to the standard Transport, which writes the body
// while reading the response: a backend that answers 413 early without
// reading a large upload gets its answer through.
func TestBodiesGoToFallback(t *testing.T) {
	s, _ := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/early" {
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s cl=%d te=%v", b, r.ContentLength, r.TransferEncoding)
	}))
	var fallback atomic.Int64
	tr := New(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		fallback.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	}), Options{})
	for _, tc := range []struct {
		body   string
		length int64
		want   string
	}{{"hello", 5, "hello cl=5 te=[]"}, {"chunky", -1, "chunky cl=-1 te=[chunked]"}} {
		r, _ := http.NewRequest("POST", s.URL, io.NopCloser(strings.NewReader(tc.body)))
		r.ContentLength = tc.length
		resp, err := tr.RoundTrip(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != tc.want {
			t.Fatalf("got %q, want %q", b, tc.want)
		}
	}
	r, _ := http.NewRequest("POST", s.URL+"/early", io.NopCloser(io.LimitReader(neverEnding('x'), 64<<20)))
	r.ContentLength = 64 << 20
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := tr.RoundTrip(r)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	select {
	case resp := <-done:
		if resp != nil && resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d, want 413", resp.StatusCode)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an early 413 did not come back while the upload was being written")
	}
	if fallback.Load() != 3 {
		t.Fatalf("fallback used %d times, want 3 (every request with a body)", fallback.Load())
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// Bytes a backend sends beyond a response (here a body on a HEAD answer
// that contains a whole second response) must never be read as the next
// request's response: the connection is not reused.
func TestLeftoverBytesNeverReachTheNextRequest(t *testing.T) {
	u := rawBackend(t, func(c net.Conn) {
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
	tr := newTransport()
	r, _ := http.NewRequest("HEAD", u+"/a", nil)
	resp, err := tr.RoundTrip(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	time.Sleep(50 * time.Millisecond) // the stray bytes are on their way: the point of the test
	r, _ = http.NewRequest("GET", u+"/b", nil)
	resp, err = tr.RoundTrip(r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Fatalf("second request got %q: another response's bytes", b)
	}
}

// A pooled connection the backend reset while idle is not used.
func TestResetIdleConnectionIsNotReused(t *testing.T) {
	reset := make(chan struct{}, 4)
	var conns atomic.Int64
	u := rawBackend(t, func(c net.Conn) {
		conns.Add(1)
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			c.Close()
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		c.(*net.TCPConn).SetLinger(0)
		c.Close() // RST
		reset <- struct{}{}
	})
	tr := newTransport()
	for i := range 2 {
		r, _ := http.NewRequest("DELETE", u, nil) // not replayable: must not need a retry
		resp, err := tr.RoundTrip(r)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		<-reset
		time.Sleep(20 * time.Millisecond) // let the RST arrive: the point of the test
	}
	if conns.Load() != 2 {
		t.Fatalf("got %d connections, want 2", conns.Load())
	}
}

func TestResponseHeaderTimeoutIsATimeout(t *testing.T) {
	u := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		http.ReadRequest(bufio.NewReader(c))
		time.Sleep(time.Second) // never answers within the timeout
	})
	tr := New(http.DefaultTransport, Options{ResponseHeaderTimeout: 50 * time.Millisecond})
	r, _ := http.NewRequest("GET", u, nil)
	_, err := tr.RoundTrip(r)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("got %v, want a timeout net.Error", err)
	}
}

func TestContextCancelReturnsContextError(t *testing.T) {
	u := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		http.ReadRequest(bufio.NewReader(c))
		time.Sleep(time.Second)
	})
	tr := New(http.DefaultTransport, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	r, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	time.AfterFunc(30*time.Millisecond, cancel)
	_, err := tr.RoundTrip(r)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestRejectsInvalidHeaderValue(t *testing.T) {
	s, _ := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tr := newTransport()
	r, _ := http.NewRequest("GET", s.URL, nil)
	r.Header["X-Bad"] = []string{"a\r\nInjected: 1"}
	if _, err := tr.RoundTrip(r); !errors.Is(err, errInvalidHeader) {
		t.Fatalf("got %v, want errInvalidHeader", err)
	}
}

func TestMalformedResponseFramingIsAnError(t *testing.T) {
	u := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		http.ReadRequest(bufio.NewReader(c))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!")
	})
	tr := newTransport()
	r, _ := http.NewRequest("GET", u, nil)
	if _, err := tr.RoundTrip(r); err == nil {
		t.Fatal("conflicting Content-Length accepted")
	}
}

func TestUpgradeGoesToFallback(t *testing.T) {
	var used atomic.Bool
	fb := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used.Store(true)
		return &http.Response{StatusCode: 299, Body: http.NoBody, Request: r}, nil
	})
	tr := New(fb, Options{})
	r, _ := http.NewRequest("GET", "http://127.0.0.1:1/", nil)
	r.Header.Set("Upgrade", "websocket")
	resp, err := tr.RoundTrip(r)
	if err != nil || resp.StatusCode != 299 || !used.Load() {
		t.Fatalf("upgrade not sent to fallback: %v %v", resp, err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestThroughReverseProxy(t *testing.T) {
	s, cl := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "xff=%s", r.Header.Get("X-Forwarded-For"))
	}))
	u, _ := url.Parse(s.URL)
	rp := &httputil.ReverseProxy{Transport: newTransport(), Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.SetXForwarded() }}
	front := httptest.NewServer(rp)
	defer front.Close()
	c := front.Client()
	for range 50 {
		resp, err := c.Get(front.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "xff=127.0.0.1" {
			t.Fatalf("got %q", b)
		}
	}
	if n := cl.n.Load(); n != 1 {
		t.Fatalf("backend accepted %d connections for 50 sequential proxied requests, want 1", n)
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, strings.Repeat("x", 1024)) }))
	defer s.Close()
	for _, impl := range []struct {
		name string
		rt   http.RoundTripper
	}{{"stdlib", &http.Transport{MaxIdleConnsPerHost: 64}}, {"upstream", New(http.DefaultTransport, Options{})}} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			r, _ := http.NewRequest("GET", s.URL, nil)
			for b.Loop() {
				resp, err := impl.rt.RoundTrip(r)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
