package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
)

// gates hands each request path a channel the test closes to let the
// backend send that response's body.
type gates struct{ m sync.Map }

func (g *gates) get(path string) chan struct{} {
	c, _ := g.m.LoadOrStore(path, make(chan struct{}))
	return c.(chan struct{})
}

// headFirstBackends starts an HTTP/1.1 backend and an h2c backend that send
// a response head at once and its body only once the request path's gate
// opens: "/chunked/…" a chunked text/event-stream, "/length/…" a head with
// Content-Length 5 (a head-only backend that stalls).
func headFirstBackends(t *testing.T, g *gates) (h1, h2 string) {
	h1 = rawServer(t, func(c net.Conn, r *http.Request) {
		gate := g.get(r.URL.Path)
		if r.URL.Path[:8] == "/chunked" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
			<-gate
			io.WriteString(c, "5\r\nhello\r\n0\r\n\r\n")
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
		<-gate
		io.WriteString(c, "hello")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h2c.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gate := g.get(r.URL.Path)
		if r.URL.Path[:8] == "/chunked" {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Length", "5")
		}
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		<-gate
		io.WriteString(w, "hello")
	}), &http2.Server{})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return h1, ln.Addr().String()
}

// Issue 26 "Streams", through the binary: a backend that sends its response
// head at once and its body later (an EventSource stream, long polling, a
// head-only backend that stalls) gets that head to the client at once, over
// HTTP/1.1 and HTTP/2 from the client and HTTP/1.1 and h2c to the backend.
// The order is asserted: the client holds the head while the backend is
// still held back from sending the body; then the body arrives whole.
func TestResponseHeadReachesClientBeforeTheBody(t *testing.T) {
	g := &gates{}
	h1, h2 := headFirstBackends(t, g)
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    h1: {rule: "Host(`+"`h1.test`"+`)", service: h1}
    h2: {rule: "Host(`+"`h2.test`"+`)", service: h2}
  services:
    h1: {loadBalancer: {servers: [{url: "http://%s"}]}}
    h2: {loadBalancer: {servers: [{url: "h2c://%s"}]}}
`, h1, h2))
	clients := map[string]http.RoundTripper{
		"HTTP/1.1": &http.Transport{},
		"HTTP/2": &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, n, a string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, n, a)
		}},
	}
	n := 0
	for cname, rt := range clients {
		for _, host := range []string{"h1.test", "h2.test"} {
			for _, kind := range []string{"chunked", "length"} {
				n++
				path := fmt.Sprintf("/%s/%d", kind, n)
				gate := g.get(path)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL(t, "web", path), nil)
				req.Host = host
				resp, err := rt.RoundTrip(req)
				if err != nil {
					cancel()
					t.Fatalf("%s client, %s backend, %s: no response head while the backend held its body back: %v", cname, host, kind, err)
				}
				close(gate) // only now may the backend send the body
				b, err := io.ReadAll(bufio.NewReader(resp.Body))
				resp.Body.Close()
				cancel()
				if resp.StatusCode != 200 || string(b) != "hello" || err != nil {
					t.Fatalf("%s client, %s backend, %s: got %d %q %v, want 200 \"hello\"", cname, host, kind, resp.StatusCode, b, err)
				}
			}
		}
	}
}

// Issue 26, through the binary: a backend that stalls after its head and
// first bytes is cut by forwardingTimeouts.readTimeout (the idle time
// between body bytes), visibly: the client gets the head and the bytes
// that came, then the connection closes with no last chunk (chunked) or
// short of Content-Length — never a response that looks complete.
func TestStalledBodyIsAbortedByReadTimeout(t *testing.T) {
	stall := rawServer(t, func(c net.Conn, r *http.Request) {
		if r.URL.Path == "/chunked" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
		} else {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
		}
		time.Sleep(30 * time.Second)
	})
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    r: {rule: "Host(`+"`stall.test`"+`)", service: s}
  services:
    s: {loadBalancer: {serversTransport: st, servers: [{url: "http://%s"}]}}
  serversTransports:
    st: {forwardingTimeouts: {readTimeout: 500ms}}
`, stall))
	addr := p.EntryPoints["web"]
	for _, path := range []string{"/chunked", "/length"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: stall.test\r\n\r\n", path)
		raw, err := io.ReadAll(c) // returns once gantry closes the connection
		c.Close()
		if err != nil {
			t.Fatalf("%s: the connection stayed open after the backend stalled (got %q): %v", path, raw, err)
		}
		s := string(raw)
		if !strings.HasPrefix(s, "HTTP/1.1 200") || !strings.Contains(s, "hello") || strings.Contains(s, "0\r\n\r\n") {
			t.Fatalf("%s: client got %q, want the head and \"hello\", then a close without a last chunk", path, s)
		}
	}
}
