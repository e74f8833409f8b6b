package h1

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rawConn dials addr and returns the connection and a reader on it.
func rawConn(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	return c, bufio.NewReader(c)
}

func readResp(t *testing.T, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return resp, string(b)
}

// closedAfter reports whether the server closes c (EOF) within a short wait.
func closedAfter(c net.Conn, br *bufio.Reader) bool {
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, err := br.ReadByte()
	return err == io.EOF
}

func TestChunkedBodyWithTrailersThenPipelined(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s cl=%d te=%v body=%q err=%v trailer=%q", r.URL.Path, r.ContentLength, r.TransferEncoding, b, err, r.Trailer.Get("X-Sum"))
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"+
		"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 42\r\n\r\n"+
		"\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc")
	_, body := readResp(t, br, "POST")
	if want := `/a cl=-1 te=[chunked] body="hello world" err=<nil> trailer="42"`; body != want {
		t.Fatalf("got %s, want %s", body, want)
	}
	_, body = readResp(t, br, "POST")
	if want := `/b cl=3 te=[] body="abc" err=<nil> trailer=""`; body != want {
		t.Fatalf("got %s, want %s", body, want)
	}
}

// A malformed chunked body fails the handler's read and the connection
// closes after the response: bytes behind it are never read as a request.
func TestMalformedChunkClosesConnection(t *testing.T) {
	for name, chunks := range map[string]string{
		"0x size":          "0x5\r\nhello\r\n0\r\n\r\n",
		"bare LF":          "5\nhello\r\n0\r\n\r\n",
		"bad terminator":   "5\r\nhelloXX0\r\n\r\n",
		"space, no ext":    "5 \r\nhello\r\n0\r\n\r\n",
		"malformed ext":    "5;a b\r\nhello\r\n0\r\n\r\n",
		"obs-fold trailer": "0\r\nX-A: a\r\n b\r\n\r\n",
		"huge size":        "ffffffffffffffff\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.ReadAll(r.Body); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				io.WriteString(w, "read "+r.URL.Path)
			}))
			c, br := rawConn(t, addr)
			io.WriteString(c, "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"+chunks+"GET /next HTTP/1.1\r\nHost: h\r\n\r\n")
			resp, _ := readResp(t, br, "POST")
			if resp.StatusCode != 400 || !closedAfter(c, br) {
				t.Fatalf("got %d; want 400 from the handler and the connection closed", resp.StatusCode)
			}
		})
	}
}

// Bad whitespace before ";" and around "=" in chunk extensions is in RFC
// 9112 §7.1.1's grammar: the body is read, and the connection kept.
func TestChunkExtensionBWS(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s body=%q err=%v", r.URL.Path, b, err)
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"+
		"5 ;a\r\nhello\r\n6\t; q = \"x y\" ;r\r\n world\r\n0\r\n\r\n"+
		"GET /b HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := readResp(t, br, "POST"); body != `/a body="hello world" err=<nil>` {
		t.Fatalf("got %s", body)
	}
	if _, body := readResp(t, br, "GET"); body != `/b body="" err=<nil>` {
		t.Fatalf("got %s", body)
	}
}

// Expect: 100-continue and a handler that answers without reading the
// body: no 100 Continue, Connection: close, connection closed. One that
// reads gets 100 Continue first and keeps the connection.
func TestExpectContinue(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/deny" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "PUT /deny HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	resp, _ := readResp(t, br, "PUT")
	if resp.StatusCode != 401 || !resp.Close || !closedAfter(c, br) {
		t.Fatalf("deny: got %d close=%v; want 401, Connection: close, closed", resp.StatusCode, resp.Close)
	}

	c, br = rawConn(t, addr)
	io.WriteString(c, "PUT /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	resp, _ = readResp(t, br, "PUT")
	if resp.StatusCode != 100 {
		t.Fatalf("echo: first response %d, want 100", resp.StatusCode)
	}
	io.WriteString(c, "hello")
	resp, body := readResp(t, br, "PUT")
	if resp.StatusCode != 200 || body != "hello" || resp.Close {
		t.Fatalf("echo: got %d %q close=%v", resp.StatusCode, body, resp.Close)
	}
}

// Every 1xx the handler writes is relayed before the final response.
func TestInformationalResponses(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusProcessing)
		w.Header().Del("Link")
		io.WriteString(w, "final")
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	r1, _ := readResp(t, br, "GET")
	r2, _ := readResp(t, br, "GET")
	r3, body := readResp(t, br, "GET")
	if r1.StatusCode != 103 || r1.Header.Get("Link") == "" || r2.StatusCode != 102 || r3.StatusCode != 200 || body != "final" {
		t.Fatalf("got %d (Link %q), %d, %d %q", r1.StatusCode, r1.Header.Get("Link"), r2.StatusCode, r3.StatusCode, body)
	}
}

// Hijack: the 101 chosen with WriteHeader is sent, bytes the client sent
// right after its head are replayed, and half-close passes both ways.
func TestHijackFullDuplexHalfClose(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "echo")
		w.WriteHeader(http.StatusSwitchingProtocols)
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(io.MultiReader(brw.Reader, c)) // until the client's half-close
		io.WriteString(c, strings.ToUpper(string(b)))
		c.(interface{ CloseWrite() error }).CloseWrite()
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nearly ")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "echo" {
		t.Fatalf("got %v %v", resp, err)
	}
	io.WriteString(c, "late")
	c.(*net.TCPConn).CloseWrite()
	b, err := io.ReadAll(br)
	if err != nil || string(b) != "EARLY LATE" {
		t.Fatalf("got %q %v, want EARLY LATE then EOF", b, err)
	}
}

func TestHTTP10KeepAliveAndClose(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			io.WriteString(w, "a")
			w.(http.Flusher).Flush()
			io.WriteString(w, "b")
			return
		}
		fmt.Fprintf(w, "%s %s", r.Proto, r.URL.Path)
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET /1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.0\r\n\r\n")
	resp, body := readResp(t, br, "GET")
	if body != "HTTP/1.0 /1" || resp.Close || resp.Header.Get("Connection") != "keep-alive" {
		t.Fatalf("keep-alive: %q close=%v %v", body, resp.Close, resp.Header)
	}
	resp, body = readResp(t, br, "GET")
	if body != "HTTP/1.0 /2" || !resp.Close || !closedAfter(c, br) {
		t.Fatalf("1.0 without keep-alive: %q close=%v", body, resp.Close)
	}
	// A streamed body of unknown length: no chunked for HTTP/1.0, the
	// close ends it.
	c, br = rawConn(t, addr)
	io.WriteString(c, "GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	all, _ := io.ReadAll(br)
	if !bytes.HasSuffix(all, []byte("\r\n\r\nab")) || bytes.Contains(all, []byte("chunked")) {
		t.Fatalf("got %q", all)
	}
}

// A handler that aborts (http.ErrAbortHandler) after a flushed chunk
// leaves the response visibly incomplete: no last chunk, connection closed.
func TestAbortedChunkedResponseHasNoLastChunk(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		io.WriteString(w, "more")
		panic(http.ErrAbortHandler)
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	all, _ := io.ReadAll(br)
	if !bytes.Contains(all, []byte("7\r\npartial\r\n")) || bytes.Contains(all, []byte("0\r\n\r\n")) || bytes.Contains(all, []byte("more")) {
		t.Fatalf("aborted response on the wire: %q", all)
	}
}

func TestAbsoluteFormTarget(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host=%s url.host=%s path=%s uri=%s", r.Host, r.URL.Host, r.URL.Path, r.RequestURI)
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET http://other.test:8080/p?q HTTP/1.1\r\nHost: h\r\n\r\n")
	_, body := readResp(t, br, "GET")
	if want := "host=other.test:8080 url.host=other.test:8080 path=/p uri=http://other.test:8080/p?q"; body != want {
		t.Fatalf("got %s, want %s", body, want)
	}
}

// An unread small body is drained to keep the connection; a large one
// closes it, announced with Connection: close.
func TestUnreadBody(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }))
	c, br := rawConn(t, addr)
	io.WriteString(c, "POST /small HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789GET /next HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := readResp(t, br, "POST"); body != "/small" || resp.Close {
		t.Fatalf("small: %q close=%v", body, resp.Close)
	}
	if _, body := readResp(t, br, "GET"); body != "/next" {
		t.Fatalf("after a drained body: %q", body)
	}
	c, br = rawConn(t, addr)
	fmt.Fprintf(c, "POST /large HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\nxx", 1<<20)
	if resp, body := readResp(t, br, "POST"); body != "/large" || !resp.Close || !closedAfter(c, br) {
		t.Fatalf("large: %q close=%v", body, resp.Close)
	}
}

// Refused heads: status, Connection: close, and the connection closed.
func TestRefusedHeads(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") }))
	for raw, status := range map[string]int{
		"GET / HTTP/1.1\r\nHost: h\r\nExpect: something\r\nContent-Length: 1\r\n\r\nx":                   417,
		"GET / HTTP/2.0\r\nHost: h\r\n\r\n":                                                              505,
		"GET / FOO/1.1\r\nHost: h\r\n\r\n":                                                               400,
		"GET  / HTTP/1.1\r\nHost: h\r\n\r\n":                                                             400,
		"G(T / HTTP/1.1\r\nHost: h\r\n\r\n":                                                              400,
		"GET * HTTP/1.1\r\nHost: h\r\n\r\n":                                                              400,
		"GET /\xff HTTP/1.1\r\nHost: h\r\n\r\n":                                                          400,
		"GET / HTTP/1.1\r\nHost: h\r\nX-A: a\x7fb\r\n\r\n":                                               400,
		"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n":                              400,
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n":                     400,
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n":                                                               505,
		"\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n":                                                          400,
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n": 400,
		"GET / HTTP/1.1\r\nHost: h\r\nHost: other\r\n\r\n":                                               400,
	} {
		c, br := rawConn(t, addr)
		io.WriteString(c, raw)
		resp, _ := readResp(t, br, "GET")
		if resp.StatusCode != status || !resp.Close || !closedAfter(c, br) {
			t.Errorf("%q: got %d close=%v; want %d and closed", raw, resp.StatusCode, resp.Close, status)
		}
	}
}

// A connection idle for longer than idleHandoff moves to a new goroutine
// (the old stack is freed) and keeps serving.
func TestIdleHandoffKeepsServing(t *testing.T) {
	spawned := make(chan struct{}, 4)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }),
		ReadHeaderTimeout: 2 * time.Second, IdleTimeout: 10 * time.Second,
		Go: func(f func()) { spawned <- struct{}{}; go f() }}
	addr := startServer(t, s)
	c, br := rawConn(t, addr)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := readResp(t, br, "GET"); body != "/1" {
		t.Fatal(body)
	}
	select {
	case <-spawned:
	case <-time.After(5 * time.Second):
		t.Fatal("the idle wait did not move to a new goroutine")
	}
	io.WriteString(c, "GET /2 HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, body := readResp(t, br, "GET"); body != "/2" {
		t.Fatal(body)
	}
}

// A parked idle connection is closed at its idle timeout, and CloseIdle
// closes parked connections at once.
func TestParkedConnectionTimeoutAndCloseIdle(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "x") }),
		ReadHeaderTimeout: 2 * time.Second, IdleTimeout: 1500 * time.Millisecond}
	addr := startServer(t, s)
	c, br := rawConn(t, addr)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	readResp(t, br, "GET")
	start := time.Now()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("want EOF at the idle timeout, got %v", err)
	}
	if d := time.Since(start); d < time.Second {
		t.Fatalf("closed after %v, before the 1.5 s idle timeout", d)
	}

	s2 := &Server{Handler: s.Handler, ReadHeaderTimeout: 2 * time.Second, IdleTimeout: time.Minute}
	addr = startServer(t, s2)
	c, br = rawConn(t, addr)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	readResp(t, br, "GET")
	time.Sleep(idleHandoff + 300*time.Millisecond) // parked now
	s2.CloseIdle()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("CloseIdle: want EOF, got %v", err)
	}
}

// Full duplex: the body is read on another goroutine while the response
// streams (with an automatic 100 Continue in between); run with -race.
func TestFullDuplexEcho(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.EnableFullDuplex(); err != nil {
			t.Error(err)
		}
		w.WriteHeader(200)
		rc.Flush()
		chunks := make(chan []byte)
		go func() {
			defer close(chunks)
			for {
				b := make([]byte, 5)
				n, err := io.ReadFull(r.Body, b)
				if n > 0 {
					chunks <- b[:n]
				}
				if err != nil {
					return
				}
			}
		}()
		for b := range chunks {
			w.Write(bytes.ToUpper(b))
			rc.Flush()
		}
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("want the 200 head before any body byte (no 100: a final status was chosen first): %v %v", resp, err)
	}
	for _, part := range []string{"hello", "world"} {
		fmt.Fprintf(c, "5\r\n%s\r\n", part)
		b := make([]byte, 5)
		if _, err := io.ReadFull(resp.Body, b); err != nil || string(b) != strings.ToUpper(part) {
			t.Fatalf("echo of %s: %q %v", part, b, err)
		}
	}
	io.WriteString(c, "0\r\n\r\n")
	if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
		t.Fatalf("end: %q %v", rest, err)
	}
}

// Parked connections share one idle timer: each still closes at its own
// idle timeout, in order, and one resumed from the middle of the timeout
// list serves its request and gets a fresh idle timeout. The handler sees
// the connection's context (ConnContext) again after the resume.
func TestParkedConnectionsExpireInOrder(t *testing.T) {
	type key struct{}
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := r.Context().Value(key{}).(string)
		io.WriteString(w, v)
	}),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, key{}, "conn-ctx")
		},
		ReadHeaderTimeout: 2 * time.Second, IdleTimeout: 1500 * time.Millisecond}
	addr := startServer(t, s)
	start := time.Now()
	type client struct {
		c  net.Conn
		br *bufio.Reader
	}
	var cl [3]client
	for i := range cl {
		if i > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * 300 * time.Millisecond)))
		}
		c, br := rawConn(t, addr)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := readResp(t, br, "GET"); body != "conn-ctx" {
			t.Fatalf("conn %d: body %q, want the ConnContext value", i, body)
		}
		cl[i] = client{c, br}
	}
	// Conn 1 (parked at about 0.55 s, between 0 and 2) sends again at 1 s.
	time.Sleep(time.Until(start.Add(time.Second)))
	io.WriteString(cl[1].c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	resumed := time.Now()
	if _, body := readResp(t, cl[1].br, "GET"); body != "conn-ctx" {
		t.Fatalf("resumed conn: body %q, want the ConnContext value (rebuilt after parking)", body)
	}
	closed := make(chan int, 3)
	at := make([]time.Duration, 3)
	for i := range cl {
		go func() {
			_, err := cl[i].br.ReadByte()
			at[i] = time.Since(start)
			if err != io.EOF {
				t.Errorf("conn %d: want EOF at the idle timeout, got %v", i, err)
			}
			closed <- i
		}()
	}
	var order []int
	for range cl {
		order = append(order, <-closed)
	}
	want := []time.Duration{1500 * time.Millisecond, resumed.Sub(start) + 1500*time.Millisecond, 2100 * time.Millisecond}
	for i, w := range want {
		if at[i] < w-100*time.Millisecond || at[i] > w+2*time.Second {
			t.Errorf("conn %d closed at %v, want about %v", i, at[i], w)
		}
	}
	if order[0] != 0 || order[1] != 2 || order[2] != 1 {
		t.Errorf("closing order %v, want [0 2 1] (by idle timeout)", order)
	}
}

// A hijacked plain TCP connection with nothing to replay is the socket
// itself: a tunnel can read it through its RawConn (upstream's relay).
func TestHijackWithoutPendingKeepsSyscallConn(t *testing.T) {
	got := make(chan bool, 1)
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusSwitchingProtocols)
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			got <- false
			return
		}
		defer c.Close()
		_, ok := c.(syscall.Conn)
		got <- ok
	}))
	c, _ := rawConn(t, addr)
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	if !<-got {
		t.Fatal("hijacked connection hides its file descriptor")
	}
}
