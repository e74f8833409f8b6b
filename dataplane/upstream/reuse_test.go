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

// Every idle connection is checked before reuse, whatever the request: a
// connection the backend half-closed while idle is never written to (the
// backend sees each request once), GET or POST.
func TestHalfClosedIdleConnectionIsNeverWrittenTo(t *testing.T) {
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
	do("GET")  // conn 1 is found closed: conn 2
	do("POST") // conn 3
	do("GET")  // conn 4
	want := []string{"1: GET", "2: GET", "3: POST", "4: GET"}
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

// Issue 26: a backend that writes a forged response 50 ms after each
// genuine one (with a body, to a GET) must never answer the next GET sent
// 300 ms later on that connection: the forged bytes make the idle
// connection unusable, whatever the method and however short the idle
// time.
func TestUnaskedBytesAfterABodyAreNeverTheNextResponse(t *testing.T) {
	var mu sync.Mutex
	conns := 0
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		mu.Lock()
		conns++
		mu.Unlock()
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\ngenuine")
			time.Sleep(50 * time.Millisecond)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged")
		}
	})
	c := testClient(Options{})
	defer c.Close()
	for i := range 4 {
		for _, m := range []string{"GET", "OPTIONS", "POST"} {
			w, res := forward(t, c, addr, httptest.NewRequest(m, "http://x.test/", nil))
			if res.Err != nil || w.body.String() != "genuine" {
				t.Fatalf("round %d %s: got %q %v, want the genuine answer", i, m, w.body.String(), res.Err)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if conns != 12 {
		t.Fatalf("%d connections for 12 requests, want 12 (each poisoned connection dropped)", conns)
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
