package h1

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// echo answers with a canonical dump of what the handler saw, and the path
// ("fast" or "std") that served it.
func echo(path string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s %s host=%s cl=%d close=%v\n", r.Method, r.RequestURI, r.Proto, r.Host, r.ContentLength, r.Close)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.Header[k], " | "))
		}
		fmt.Fprintf(&b, "body=%q", body)
		w.Header().Set("X-Path", path)
		io.WriteString(w, b.String())
	})
}

// start serves a loopback listener with h; it is closed at the end of
// the test.
func start(t *testing.T, h http.Handler) string {
	t.Helper()
	return startServer(t, &Server{Handler: h, ReadHeaderTimeout: 2 * time.Second, IdleTimeout: 5 * time.Second})
}

// startServer serves a loopback listener with s.
func startServer(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Go(func() { s.ServeConn(c, time.Time{}) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.CloseIdle()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// exchange writes raw to addr and returns the responses read until the
// server closes or stays silent, and whether it closed the connection.
func exchange(t *testing.T, addr, raw string, n int, methods ...string) (resps []string, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, raw)
	br := bufio.NewReader(c)
	for i := range n {
		wait := 2 * time.Second
		if i > 0 {
			wait = 400 * time.Millisecond // a second response, if any, is already on its way
		}
		c.SetReadDeadline(time.Now().Add(wait))
		var req *http.Request
		if i < len(methods) {
			req = &http.Request{Method: methods[i]}
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return resps, true
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Header.Del("Date")
		resps = append(resps, fmt.Sprintf("%d %s\n%s", resp.StatusCode, resp.Header.Get("X-Path"), b))
	}
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err = br.ReadByte()
	closed = err == io.EOF
	return resps, closed
}

func TestServesSimpleRequestsAndKeepsAlive(t *testing.T) {
	addr := start(t, echo("fast"))
	raw := "GET /a?x=1 HTTP/1.1\r\nHost: example.test\r\nAccept: */*\r\nX-Multi: 1\r\nX-Multi: 2\r\nuser-agent: t\r\n\r\n" +
		"HEAD /b HTTP/1.1\r\nHost: example.test\r\n\r\n" +
		"DELETE /c HTTP/1.1\r\nHost: example.test\r\nContent-Length: 0\r\n\r\n"
	resps, closed := exchange(t, addr, raw, 3, "GET", "HEAD", "DELETE")
	if len(resps) != 3 || closed {
		t.Fatalf("got %d responses, closed=%v: %q", len(resps), closed, resps)
	}
	want0 := "200 fast\nGET /a?x=1 HTTP/1.1 host=example.test cl=0 close=false\nAccept: */*\nUser-Agent: t\nX-Multi: 1 | 2\nbody=\"\""
	if resps[0] != want0 {
		t.Fatalf("got\n%s\nwant\n%s", resps[0], want0)
	}
	if resps[1] != "200 fast\n" { // HEAD: no body
		t.Fatalf("HEAD: got %q (a HEAD response has no body)", resps[1])
	}
	if !strings.HasPrefix(resps[2], "200 fast\nDELETE /c") {
		t.Fatalf("DELETE: got %q", resps[2])
	}
}

func TestResponseFraming(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big": // no Content-Length, larger than the buffer: chunked
			io.WriteString(w, strings.Repeat("b", 3*BufferSize))
		case "/flush": // flushed: chunked, delivered before the handler ends
			io.WriteString(w, "one")
			w.(http.Flusher).Flush()
			io.WriteString(w, "two")
		case "/cl":
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		case "/short": // declares 10, writes 5: the connection must close
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "hello")
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/trailer":
			w.Header().Set("Trailer", "X-Sum")
			io.WriteString(w, "body")
			w.Header().Set("X-Sum", "42")
		case "/split":
			w.Header().Set("X-Inject", "a\r\nSet-Cookie: evil=1")
			io.WriteString(w, "ok")
		case "/close":
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		case "/abort":
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
	})
	addr := start(t, h)
	get := func(path string) (*http.Response, string, error) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: h\r\n\r\n", path)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return nil, "", err
		}
		b, err := io.ReadAll(resp.Body)
		return resp, string(b), err
	}
	resp, body, err := get("/big")
	if err != nil || len(body) != 3*BufferSize || !slices.Equal(resp.TransferEncoding, []string{"chunked"}) {
		t.Fatalf("/big: %v te=%v len=%d", err, resp.TransferEncoding, len(body))
	}
	resp, body, _ = get("/flush")
	if body != "onetwo" || !slices.Equal(resp.TransferEncoding, []string{"chunked"}) {
		t.Fatalf("/flush: %q %v", body, resp.TransferEncoding)
	}
	resp, body, _ = get("/cl")
	if body != "hello" || resp.ContentLength != 5 || resp.Close {
		t.Fatalf("/cl: %q cl=%d close=%v", body, resp.ContentLength, resp.Close)
	}
	if _, _, err = get("/short"); err == nil {
		t.Fatal("/short: a body shorter than its Content-Length must end in a closed connection (unexpected EOF)")
	}
	resp, body, _ = get("/204")
	if resp.StatusCode != 204 || body != "" || resp.Header.Get("Content-Length") != "" {
		t.Fatalf("/204: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body, _ = get("/trailer")
	if body != "body" || resp.Trailer.Get("X-Sum") != "42" {
		t.Fatalf("/trailer: %q trailer=%v", body, resp.Trailer)
	}
	resp, _, _ = get("/split")
	if resp.Header.Get("Set-Cookie") != "" || resp.Header.Get("X-Inject") != "a  Set-Cookie: evil=1" {
		t.Fatalf("/split: header injection: %v", resp.Header)
	}
	resp, body, _ = get("/close")
	if body != "bye" || !resp.Close {
		t.Fatalf("/close: a handler's Connection: close must close the connection: %q close=%v", body, resp.Close)
	}
	if _, _, err = get("/abort"); err == nil {
		t.Fatal("/abort: an aborted response must not look complete")
	}
}

func TestIdleTimeoutClosesConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := &Server{Handler: echo("fast"), ReadHeaderTimeout: 100 * time.Millisecond, IdleTimeout: time.Hour}
	done := make(chan struct{})
	go func() {
		c, _ := ln.Accept()
		s.ServeConn(c, time.Time{})
		close(done)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("idle connection not closed")
	}
}

func BenchmarkServer(b *testing.B) {
	body := strings.Repeat("x", 1024)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1024")
		io.WriteString(w, body)
	})
	for _, impl := range []string{"nethttp", "h1"} {
		b.Run(impl, func(b *testing.B) {
			var addr string
			if impl == "h1" {
				t := &testing.T{}
				_ = t
				ln, _ := net.Listen("tcp", "127.0.0.1:0")
				defer ln.Close()
				s := &Server{Handler: h}
				go func() {
					for {
						c, err := ln.Accept()
						if err != nil {
							return
						}
						go s.ServeConn(c, time.Time{})
					}
				}()
				addr = ln.Addr().String()
			} else {
				ln, _ := net.Listen("tcp", "127.0.0.1:0")
				hs := &http.Server{Handler: h}
				go hs.Serve(ln)
				defer hs.Close()
				addr = ln.Addr().String()
			}
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			req := []byte("GET / HTTP/1.1\r\nHost: bench.local\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n")
			b.ReportAllocs()
			for b.Loop() {
				c.Write(req)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// A client that leaves while its request is in progress cancels the
// request's context, as with net/http, so the upstream request stops.
func TestClientGoneCancelsSlowRequest(t *testing.T) {
	cancelled := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(10 * time.Second):
		}
	})
	addr := start(t, h)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
	time.Sleep(2 * watchAfter) // the point of the test: the request is now slow
	c.Close()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("request context not cancelled after the client left")
	}
}

// A pipelined request that arrives while a slow one runs is kept and served.
func TestPipelinedBytesDuringSlowRequestAreKept(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(3 * watchAfter)
		}
		io.WriteString(w, r.URL.Path)
	})
	addr := start(t, h)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
	time.Sleep(2 * watchAfter) // the watch is running when the next request arrives
	io.WriteString(c, "GET /next HTTP/1.1\r\nHost: h\r\n\r\n")
	br := bufio.NewReader(c)
	for _, want := range []string{"/slow", "/next"} {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", want, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != want {
			t.Fatalf("got %q, want %q", b, want)
		}
	}
}

// After a first request the connection waits for the next one without a
// buffer (readIdle); the idle timeout still closes it.
func TestIdleTimeoutAfterARequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := &Server{Handler: echo("fast"), IdleTimeout: 100 * time.Millisecond}
	done := make(chan struct{})
	go func() {
		c, _ := ln.Accept()
		s.ServeConn(c, time.Time{})
		close(done)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("idle connection not closed after its first request")
	}
}

// A client that sends its request and then half-closes (nc -N, some health
// checkers) still gets the response of a slow handler, as with net/http.
func TestHalfClosedClientGetsTheResponse(t *testing.T) {
	var ctxAfter context.Context
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(3 * watchAfter) // slow: the watch sees the half-close
		ctxAfter = r.Context()
		io.WriteString(w, "hello")
	})
	addr := start(t, h)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response after half-close: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello" || !resp.Close {
		t.Fatalf("got %q close=%v, want hello and Connection: close", b, resp.Close)
	}
	if ctxAfter.Err() == nil {
		t.Fatal("the request context outlived its handler")
	}
}

// Body pieces larger than the write buffer are written through (one
// writev with what the buffer holds); mixed with small ones, with and
// without Content-Length, the body arrives whole and in order (a 5 MiB
// piece fills the socket: writev resumes after partial writes).
func TestLargeWritesKeepOrder(t *testing.T) {
	sizes := []int{10, 3 * BufferSize, 1, BufferSize - 3, BufferSize + 1, 100, 20000, 7, 40000, 5 << 20, 3}
	var want strings.Builder
	for i, n := range sizes {
		want.WriteString(strings.Repeat(string(rune('a'+i)), n))
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cl" {
			w.Header().Set("Content-Length", strconv.Itoa(want.Len()))
		}
		for i, n := range sizes {
			io.WriteString(w, strings.Repeat(string(rune('a'+i)), n))
		}
	})
	addr := start(t, h)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for _, path := range []string{"/chunked", "/cl", "/chunked"} {
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: h\r\n\r\n", path)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || string(b) != want.String() {
			t.Fatalf("%s: %v, %d bytes (want %d)", path, err, len(b), want.Len())
		}
		if chunked := slices.Equal(resp.TransferEncoding, []string{"chunked"}); chunked != (path == "/chunked") {
			t.Fatalf("%s: transfer-encoding %v", path, resp.TransferEncoding)
		}
	}
}
