package dataplane

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// One entry handler for every protocol: HTTP/1.1 plain and over TLS
// (ALPN http/1.1 and no ALPN at all) are served by h1, HTTP/2 over TLS and
// h2c by net/http's HTTP/2 server; each request reaches the same router,
// with the same arrival policy (TE: trailers kept, other TE dropped).
func TestEveryProtocolReachesTheSameHandler(t *testing.T) {
	be := newCaptureBackend(t)
	h := newHarness(t, nil, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers:
    plain@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}
    secure@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file, tls: {}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	addr := h.Addr("web")
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}
	tlsConf := func(alpn ...string) *tls.Config {
		return &tls.Config{InsecureSkipVerify: true, ServerName: "app", NextProtos: alpn} //nolint:gosec // test
	}
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	var h1only, h2only http.Protocols
	h1only.SetHTTP1(true)
	h2only.SetHTTP2(true)
	for _, tt := range []struct {
		name, scheme, proto string
		tr                  *http.Transport
	}{
		{"h1 plain", "http", "HTTP/1.1", &http.Transport{DialContext: dial}},
		{"h1 TLS ALPN http/1.1", "https", "HTTP/1.1", &http.Transport{DialContext: dial, TLSClientConfig: tlsConf("http/1.1"), Protocols: &h1only}},
		{"h1 TLS no ALPN", "https", "HTTP/1.1", &http.Transport{DialContext: dial, TLSClientConfig: tlsConf(), TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}},
		{"h2 TLS", "https", "HTTP/2.0", &http.Transport{DialContext: dial, TLSClientConfig: tlsConf("h2"), Protocols: &h2only}},
		{"h2c", "http", "HTTP/2.0", &http.Transport{DialContext: dial, Protocols: &h2c}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer tt.tr.CloseIdleConnections()
			for i := range 2 { // and again on the same connection
				req, _ := http.NewRequest("POST", tt.scheme+"://app/p", strings.NewReader("body"))
				if tt.proto == "HTTP/1.1" {
					req.Header.Set("Te", "trailers, deflate")
				} else {
					req.Header.Set("Te", "trailers") // anything else is malformed in HTTP/2
				}
				resp, err := (&http.Client{Transport: tt.tr}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || resp.Proto != tt.proto {
					t.Fatalf("request %d: %d %s, want 200 %s", i, resp.StatusCode, resp.Proto, tt.proto)
				}
				got := be.take()
				if len(got) != 1 || !strings.Contains(got[0], "X-Forwarded-Proto: "+tt.scheme) || !strings.Contains(got[0], "body=body") {
					t.Fatalf("backend received %q", got)
				}
				if strings.Contains(got[0], "deflate") {
					t.Errorf("TE other than trailers forwarded: %s", got[0])
				}
			}
		})
	}
}

// maxConnections: at the cap a new connection is not served (it waits in
// the backlog, or held unread) while every open one is busy (here in the
// middle of a request head), until one closes; when open ones are idle
// keep-alive connections, the one idle the longest is closed and the new
// connection is served at once.
func TestConnectionCap(t *testing.T) {
	be := newCaptureBackend(t)
	h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0",
		Transport: &static.EntryTransport{MaxConnections: 2}}}, nil)
	catchAll(h, be.URL, "")
	addr := h.Addr("web")
	const head, end = "GET / HTTP/1.1\r\nHost: app\r\n", "\r\n"
	open := func(s string) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, s)
		return c, bufio.NewReader(c)
	}
	served := func(c net.Conn, br *bufio.Reader, wait time.Duration) bool {
		c.SetReadDeadline(time.Now().Add(wait))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	c1, _ := open(head)
	c2, br2 := open(head)
	time.Sleep(200 * time.Millisecond) // both accepted, reading their heads
	c3, br3 := open(head + end)
	if served(c3, br3, 500*time.Millisecond) {
		t.Fatal("a third connection was served past maxConnections: 2 with both open ones busy")
	}
	c1.Close()
	if !served(c3, br3, 5*time.Second) {
		t.Fatal("the waiting connection was not served after one closed")
	}
	// c3 goes idle first: its server goroutine, which marks the start
	// of the idle wait after writing the response, gets time to do so
	// before c2 is served (on a loaded machine it may lag behind).
	time.Sleep(300 * time.Millisecond)
	io.WriteString(c2, end)
	if !served(c2, br2, 5*time.Second) {
		t.Fatal("the second connection was not served")
	}
	// c3 and c2 are idle keep-alive connections now, c3 the longer.
	c4, br4 := open(head + end)
	if !served(c4, br4, 10*time.Second) {
		t.Fatal("a new connection was not served at the cap with two idle ones open")
	}
	c3.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br3.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection idle the longest is still open (%v)", err)
	}
	io.WriteString(c2, head+end)
	if !served(c2, br2, 5*time.Second) {
		t.Error("the other idle connection was closed too")
	}
}

// An invalid maxConnections names the option.
func TestConnectionCapValidated(t *testing.T) {
	_, err := NewServer(dptest.Logger(t), nil, map[string]*static.EntryPoint{"web": {Address: ":0",
		Transport: &static.EntryTransport{MaxConnections: -1}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "entrypoint web: transport.maxConnections") {
		t.Fatalf("got %v", fmt.Sprint(err))
	}
}
