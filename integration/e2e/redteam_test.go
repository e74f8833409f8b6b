package e2e

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingBackend is a raw TCP backend that records every byte it
// receives and answers each request head with "200 ok" (Content-Length
// 2); it returns host:port and a function returning what it has seen.
func recordingBackend(t *testing.T) (string, func() string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var seen strings.Builder
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					mu.Lock()
					seen.WriteString(line)
					mu.Unlock()
					if err != nil {
						return
					}
					if line == "\r\n" {
						io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), func() string {
		mu.Lock()
		defer mu.Unlock()
		return seen.String()
	}
}

// rawExchange sends raw on a new connection to addr and reads until gantry
// closes it or nothing more comes for 500ms; closed says which.
func rawExchange(t *testing.T, addr, raw string) (got string, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, err := c.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return b.String(), false
			}
			return b.String(), true
		}
	}
}

// Red team, through the binary: "OPTIONS * HTTP/1.1" asks about the server
// itself (RFC 9110 §9.3.7). Gantry answered it by routing the path "*"
// cleaned to "/*" and forwarding "OPTIONS /%2A" to the backend — a
// different request target than the client sent. net/http (so Traefik)
// answers it itself: 200 with Content-Length 0, nothing forwarded, the
// connection kept.
func TestOptionsAsteriskAnsweredByGantry(t *testing.T) {
	be, seen := recordingBackend(t)
	p := startProxy(t, map[string]string{"web": ""}, "", `
http:
  routers:
    r: {rule: "PathPrefix(`+"`/`"+`)", service: s}
  services:
    s: {loadBalancer: {servers: [{url: "http://`+be+`"}]}}
`)
	addr := strings.TrimPrefix(p.URL(t, "web", ""), "http://")
	got, closed := rawExchange(t, addr, "OPTIONS * HTTP/1.1\r\nHost: app\r\n\r\nGET /after HTTP/1.1\r\nHost: app\r\n\r\n")
	first, rest, _ := strings.Cut(got, "\r\n\r\n")
	if !strings.HasPrefix(first, "HTTP/1.1 200 ") || !strings.Contains(first, "\r\nContent-Length: 0") {
		t.Fatalf("OPTIONS * got %q, want 200 with Content-Length: 0", got)
	}
	if !strings.HasPrefix(rest, "HTTP/1.1 200 ") || closed {
		t.Fatalf("the request pipelined after OPTIONS * got %q (closed %v), want 200 on the kept connection", rest, closed)
	}
	b := seen()
	if strings.Contains(b, "OPTIONS") || !strings.Contains(b, "GET /after HTTP/1.1\r\n") {
		t.Fatalf("backend received %q: OPTIONS * must not be forwarded, GET /after must", b)
	}
}

// Red team, through the binary: "CONNECT host:port" asks a forward proxy
// for a tunnel. Gantry forwarded it to the matching route as
// "CONNECT / HTTP/1.1" and parsed what followed as the next request. It is
// refused with 405 (and an Allow field), nothing is forwarded, and the
// connection closes, so the bytes a client sends after CONNECT — tunnel
// data — are never parsed as a request.
func TestConnectRefusedAndClosed(t *testing.T) {
	be, seen := recordingBackend(t)
	p := startProxy(t, map[string]string{"web": ""}, "", `
http:
  routers:
    r: {rule: "PathPrefix(`+"`/`"+`) || HostRegexp(`+"`.+`"+`)", service: s}
  services:
    s: {loadBalancer: {servers: [{url: "http://`+be+`"}]}}
`)
	addr := strings.TrimPrefix(p.URL(t, "web", ""), "http://")
	got, closed := rawExchange(t, addr, "CONNECT app:443 HTTP/1.1\r\nHost: app:443\r\n\r\nGET /after HTTP/1.1\r\nHost: app\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 405 ") || !strings.Contains(got, "\r\nAllow: ") || !closed {
		t.Fatalf("CONNECT got %q (closed %v), want 405 with Allow and the connection closed", got, closed)
	}
	if strings.Count(got, "HTTP/1.1 ") != 1 {
		t.Fatalf("bytes after CONNECT were answered as a request: %q", got)
	}
	if b := seen(); b != "" {
		t.Fatalf("backend received %q, want nothing", b)
	}
}

// Red team, through the binary: a WebSocket upgrade that the backend
// answers with 200 instead of 101 leaves an ordinary HTTP/1.1 connection,
// never a tunnel: a request the client pipelines behind the upgrade is
// parsed and routed by Gantry (the backend sees Gantry's X-Forwarded-For,
// not the client's forged one), not spliced raw to the backend.
func TestUpgradeAnswered200IsNoTunnel(t *testing.T) {
	be, seen := recordingBackend(t)
	p := startProxy(t, map[string]string{"web": ""}, "", `
http:
  routers:
    r: {rule: "PathPrefix(`+"`/`"+`)", service: s}
  services:
    s: {loadBalancer: {servers: [{url: "http://`+be+`"}]}}
`)
	addr := strings.TrimPrefix(p.URL(t, "web", ""), "http://")
	got, closed := rawExchange(t, addr, "GET /ws HTTP/1.1\r\nHost: app\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"+
		"GET /smuggled HTTP/1.1\r\nHost: app\r\nX-Forwarded-For: 6.6.6.6\r\n\r\n")
	if strings.Count(got, "HTTP/1.1 200 OK\r\n") != 2 || closed {
		t.Fatalf("client got %q (closed %v), want two 200s on a kept connection", got, closed)
	}
	b := seen()
	_, second, ok := strings.Cut(b, "GET /smuggled HTTP/1.1\r\n")
	if !ok {
		t.Fatalf("backend never received the pipelined request: %q", b)
	}
	second, _, _ = strings.Cut(second, "\r\n\r\n")
	second += "\r\n"
	if strings.Contains(second, "6.6.6.6") || !strings.Contains(second, "X-Forwarded-For: 127.0.0.1\r\n") {
		t.Fatalf("the pipelined request reached the backend as %q: it was tunnelled, not routed", second)
	}
}

// Red team, through the binary: underscore spellings of framing and
// hop-by-hop fields (Transfer_Encoding, Content_Length) were
// forwarded; a CGI/WSGI-style backend reads them as the real fields
// (HTTP_TRANSFER_ENCODING). They are deleted like X_Forwarded_For; an
// ordinary underscore field is still forwarded (Traefik keeps them).
func TestUnderscoreFramingFieldsNotForwarded(t *testing.T) {
	be, seen := recordingBackend(t)
	p := startProxy(t, map[string]string{"web": ""}, "", `
http:
  routers:
    r: {rule: "PathPrefix(`+"`/`"+`)", service: s}
  services:
    s: {loadBalancer: {servers: [{url: "http://`+be+`"}]}}
`)
	addr := strings.TrimPrefix(p.URL(t, "web", ""), "http://")
	got, closed := rawExchange(t, addr, "GET /u HTTP/1.1\r\nHost: app\r\nTransfer_Encoding: chunked\r\nContent_Length: 40\r\n"+
		"X_Custom: kept\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 200 ") || closed {
		t.Fatalf("client got %q (closed %v), want 200 on a kept connection", got, closed)
	}
	b := strings.ToLower(seen())
	for _, bad := range []string{"transfer_encoding", "content_length"} {
		if strings.Contains(b, bad) {
			t.Errorf("backend received %s: %q", bad, b)
		}
	}
	if !strings.Contains(b, "x_custom: kept\r\n") {
		t.Errorf("an ordinary underscore field was not forwarded: %q", b)
	}
}
