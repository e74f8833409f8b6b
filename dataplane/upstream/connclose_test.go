package upstream

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// A response with "Connection: close" ends the connection's use (RFC 9112
// §9.6): the next request goes on a new connection even when the backend
// leaves the socket open. The backend here answers every request it reads
// on a connection, naming the connection and the request's number on it,
// and never closes, so a reused connection shows as "conn 1 request 2".
func TestConnectionCloseResponseIsNotReused(t *testing.T) {
	var conns atomic.Int64
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		id := conns.Add(1)
		br := bufio.NewReader(c)
		for n := 1; ; n++ {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			body := fmt.Sprintf("conn %d request %d", id, n)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}
	})
	c := testClient(Options{})
	for i, want := range []string{"conn 1 request 1", "conn 2 request 1", "conn 3 request 1"} {
		w, res := forward(t, c, addr, httptest.NewRequest("GET", "http://example.test/", nil))
		if res.Err != nil || w.status != 200 {
			t.Fatalf("request %d: %d %v", i+1, w.status, res.Err)
		}
		if got := w.body.String(); got != want {
			t.Fatalf("request %d answered %q, want %q (a connection the backend closed by header was reused)", i+1, got, want)
		}
	}
}
