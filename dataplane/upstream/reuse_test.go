package upstream

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// halfClosingBackend answers each request with "ok" and then half-closes
// the connection (FIN, as a server whose keep-alive timeout expired), but
// keeps reading it: a request written to such a connection reaches the
// backend and is recorded, and can never be answered. Each request line is
// recorded with the connection's number.
type halfClosingBackend struct {
	mu    sync.Mutex
	seen  []string // "conn#: METHOD"
	conns int
	fin   chan struct{} // a half-close happened
}

func newHalfClosingBackend(t *testing.T) (*halfClosingBackend, string) {
	be := &halfClosingBackend{fin: make(chan struct{}, 16)}
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		be.mu.Lock()
		be.conns++
		n := be.conns
		be.mu.Unlock()
		br := bufio.NewReader(c)
		answered := false
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			be.mu.Lock()
			be.seen = append(be.seen, string(rune('0'+n))+": "+req.Method)
			be.mu.Unlock()
			if answered {
				continue // half-closed: read, never answered
			}
			answered = true
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			c.(*net.TCPConn).CloseWrite()
			be.fin <- struct{}{}
		}
	})
	return be, addr
}

func (be *halfClosingBackend) requests() []string {
	be.mu.Lock()
	defer be.mu.Unlock()
	return append([]string(nil), be.seen...)
}

// The liveness peek is skipped for a request that may be replayed on a
// connection that went idle a moment ago: when the backend had closed it,
// the request fails before any response byte and is sent again on a new
// connection — the client gets its answer, and the backend sees it twice.
// A request that cannot be replayed (POST) is never written to a closed
// connection: its connection is peeked first. After one unchecked
// connection turned out closed, the Host checks every one (a backend with
// a short keep-alive timeout costs one retry, not one per request).
func TestUncheckedReuseRetriesReplayableOnly(t *testing.T) {
	be, addr := newHalfClosingBackend(t)
	c := testClient(Options{})
	defer c.Close()
	do := func(method string) {
		t.Helper()
		w, res := forward(t, c, addr, httptest.NewRequest(method, "http://x.test/", nil))
		if res.Err != nil || w.body.String() != "ok" {
			t.Fatalf("%s: got %q %v", method, w.body.String(), res.Err)
		}
		select {
		case <-be.fin:
		case <-time.After(5 * time.Second):
			t.Fatal("the backend did not half-close")
		}
		time.Sleep(20 * time.Millisecond) // the FIN reaches the pooled socket
	}
	do("GET")  // conn 1, half-closed afterwards
	do("GET")  // unchecked conn 1: written there, EOF, retried on conn 2
	do("POST") // peeked: conn 2 is closed, so conn 3
	do("GET")  // peekHold: conn 3 is peeked, so conn 4
	want := []string{"1: GET", "1: GET", "2: GET", "3: POST", "4: GET"}
	got := be.requests()
	slices.Sort(got) // conn 1's reader may record after conn 2's
	if len(got) != len(want) {
		t.Fatalf("backend saw %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("backend saw %v, want %v", got, want)
		}
	}
}

// After a response without a body (HEAD here), the next request peeks
// even when it could skip it: a backend that wrongly sends a body to HEAD
// does so right after the head, and those bytes must not become the next
// client's response.
func TestBodylessResponseIsPeekedBeforeReuse(t *testing.T) {
	sent := make(chan struct{}, 1)
	var mu sync.Mutex
	conns := 0
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		mu.Lock()
		conns++
		mu.Unlock()
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			if req.Method == http.MethodHead {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 44\r\n\r\n")
				time.Sleep(5 * time.Millisecond) // after the head was read
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged")
				sent <- struct{}{}
				continue
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nreal")
		}
	})
	c := testClient(Options{})
	defer c.Close()
	if _, res := forward(t, c, addr, httptest.NewRequest("HEAD", "http://x.test/", nil)); res.Err != nil {
		t.Fatal(res.Err)
	}
	<-sent
	time.Sleep(20 * time.Millisecond)
	w, res := forward(t, c, addr, httptest.NewRequest("GET", "http://x.test/", nil))
	if res.Err != nil || w.body.String() != "real" {
		t.Fatalf("got %q %v, want the real answer", w.body.String(), res.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if conns != 2 {
		t.Fatalf("%d connections, want 2 (the one with unasked bytes dropped)", conns)
	}
}

// A connection idle for longer than the read deadline its last exchange
// left on the socket (the 100 ms probe) is still reused by a request that
// peeks first (POST): the peek ignores that deadline.
func TestIdleConnectionReusedAfterItsReadDeadline(t *testing.T) {
	s, cl := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	c := testClient(Options{})
	defer c.Close()
	for i := range 3 {
		if w, res := forward(t, c, hostOf(s), httptest.NewRequest("POST", "http://x.test/", nil)); res.Err != nil || w.body.String() != "ok" {
			t.Fatalf("request %d: %q %v", i, w.body.String(), res.Err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if n := cl.n.Load(); n != 1 {
		t.Fatalf("%d connections for 3 requests 300 ms apart, want 1", n)
	}
}
