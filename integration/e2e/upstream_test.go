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
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
	"golang.org/x/net/http2"
)

// rawServer answers every connection with fn after reading one request
// head; it returns host:port.
func rawServer(t *testing.T, fn func(c net.Conn, r *http.Request)) string {
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
			go func() {
				defer c.Close()
				r, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				fn(c, r)
			}()
		}
	}()
	return ln.Addr().String()
}

func oneRoute(host, server string, extra string) string {
	return fmt.Sprintf(`
http:
  routers:
    r: {rule: "Host(`+"`%s`"+`)", service: s}
  services:
    s:
      loadBalancer:%s
        servers: [{url: "%s"}]
`, host, extra, server)
}

// Issue 12, through the binary: a chunked response cut before its last
// chunk reaches a plain HTTP/1.1 GET client as broken (no terminating
// chunk, the connection closed), and a backend still sending its head when
// the response-header timeout fires is a 504.
func TestBrokenUpstreamResponses(t *testing.T) {
	cut := rawServer(t, func(c net.Conn, r *http.Request) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
	})
	slow := rawServer(t, func(c net.Conn, r *http.Request) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Half: ")
		time.Sleep(3 * time.Second)
	})
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    cut: {rule: "Host(`+"`cut.test`"+`)", service: cut}
    slow: {rule: "Host(`+"`slow.test`"+`)", service: slow}
  services:
    cut: {loadBalancer: {servers: [{url: "http://%s"}]}}
    slow: {loadBalancer: {serversTransport: quick, servers: [{url: "http://%s"}]}}
  serversTransports:
    quick: {forwardingTimeouts: {responseHeaderTimeout: 300ms}}
`, cut, slow))
	addr := strings.TrimPrefix(p.URL(t, "web", ""), "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: cut.test\r\n\r\n")
	raw, err := io.ReadAll(c) // returns only when gantry closes the connection
	if err != nil {
		t.Fatalf("the connection stayed open after a truncated body (got %q): %v", raw, err)
	}
	if s := string(raw); !strings.HasPrefix(s, "HTTP/1.1 200") || strings.Contains(s, "0\r\n\r\n") {
		t.Fatalf("client got %q: a truncated chunked body must not end with a terminating chunk", s)
	}
	r := get(t, p.URL(t, "web", "/"), harness.Host("slow.test"))
	if r.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("a partial head at the response-header timeout got %d, want 504", r.StatusCode)
	}
}

// Issue 12, through the binary: an HTTP/2 client's upload with Expect:
// 100-continue that the backend refuses at once (401, Connection: close,
// the unread body turning the close into a reset) gets 20 of 20 clean
// 401s (it was 3 of 20 "broken pipe" 502s).
func TestEarly401ToHTTP2Upload(t *testing.T) {
	deny := rawServer(t, func(c net.Conn, r *http.Request) {
		io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 6\r\n\r\ndenied")
		c.(*net.TCPConn).SetLinger(0)
	})
	p := startProxy(t, map[string]string{"web": ""}, "", oneRoute("auth.test", "http://"+deny, ""))
	tr := &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, n, a string, _ *tls.Config) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, n, a)
	}}
	defer tr.CloseIdleConnections()
	body := strings.Repeat("u", 2<<20)
	for i := range 20 {
		req, _ := http.NewRequest(http.MethodPut, p.URL(t, "web", "/upload"), strings.NewReader(body))
		req.Host = "auth.test"
		req.Header.Set("Expect", "100-continue")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("upload %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || string(b) != "denied" {
			t.Fatalf("upload %d: got %d %q, want a clean 401", i, resp.StatusCode, b)
		}
	}
}
