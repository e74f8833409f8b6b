package dataplane

// Server-side defects of issue 12, each through a real Server, proxy and
// capture backend; each failed on the former net/http + fast-path server.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
)

// catchAll routes every request of h to be, through the middlewares named
// (defined in mws, YAML).
func catchAll(h *harness, be string, mws string, names ...string) {
	mwList := ""
	if len(names) > 0 {
		mwList = ", middlewares: [" + strings.Join(names, ", ") + "]"
	}
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file%s}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
%s`, mwList, be, mws), generation.Options{})
}

// Framing that needed repair (obs-fold, bare LF, a duplicate identical
// Content-Length, HTTP/1.0 with Transfer-Encoding) is answered 400 and the
// connection closed; a request pipelined behind it never reaches the
// backend. net/http accepted all four and kept the connection alive
// (forwarding the pipelined request after the HTTP/1.0 one).
func TestRepairedFramingClosesConnection(t *testing.T) {
	be := newCaptureBackend(t)
	h := newHarness(t, nil, nil)
	catchAll(h, be.URL, "")
	next := "GET /smuggled HTTP/1.1\r\nHost: app\r\n\r\n"
	for name, raw := range map[string]string{
		"obs-fold":           "GET / HTTP/1.1\r\nHost: app\r\nX-A: one\r\n two\r\n\r\n",
		"bare LF":            "GET / HTTP/1.1\nHost: app\n\n",
		"duplicate CL":       "POST / HTTP/1.1\r\nHost: app\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.0 with TE":   "POST / HTTP/1.0\r\nHost: app\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"CL and TE":          "POST / HTTP/1.1\r\nHost: app\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"space before colon": "GET / HTTP/1.1\r\nHost: app\r\nX-A : b\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			be.take()
			statuses, closed := rawExchange(t, h.Addr("web"), raw+next, 2)
			if len(statuses) != 1 || statuses[0] != 400 || !closed {
				t.Fatalf("got statuses %v closed=%v; want one 400 and the connection closed", statuses, closed)
			}
			time.Sleep(50 * time.Millisecond)
			if got := be.take(); len(got) != 0 {
				t.Fatalf("backend received %d requests (want none):\n%s", len(got), strings.Join(got, "\n---\n"))
			}
		})
	}
}

// A header that a headers middleware adds survives a client Connection
// list naming it (CVE-2021-32813 class): hop-by-hop fields of the client's
// message are removed on arrival, before the middlewares. The client's own
// field of that name is removed (it is hop-by-hop for that client).
func TestConnectionListDoesNotStripMiddlewareHeader(t *testing.T) {
	be := newCaptureBackend(t)
	h := newHarness(t, nil, nil)
	catchAll(h, be.URL, `  middlewares: {add@file: {headers: {customRequestHeaders: {X-Added: by-gantry}}}}
`, "add@file")
	for _, proto := range []string{"HTTP/1.1", "HTTP/1.0"} {
		raw := "GET /x " + proto + "\r\nHost: app\r\nConnection: keep-alive, X-Added, X-Client\r\nX-Client: drop-me\r\nKeep-Alive: timeout=5\r\n\r\n"
		statuses, _ := rawExchange(t, h.Addr("web"), raw, 1)
		if len(statuses) != 1 || statuses[0] != 200 {
			t.Fatalf("%s: statuses %v", proto, statuses)
		}
		got := be.take()
		if len(got) != 1 {
			t.Fatalf("%s: backend received %d requests", proto, len(got))
		}
		if !strings.Contains(got[0], "X-Added: by-gantry") {
			t.Errorf("%s: the middleware's X-Added was stripped by the client's Connection list:\n%s", proto, got[0])
		}
		for _, bad := range []string{"X-Client", "Keep-Alive", "drop-me"} {
			if strings.Contains(got[0], bad) {
				t.Errorf("%s: client hop-by-hop %s forwarded:\n%s", proto, bad, got[0])
			}
		}
	}
}

// The header timeout covers the whole head from the accept: a client that
// sends its first byte just before the timeout is cut at the timeout, not
// a second timeout later (net/http's first-byte wait and header timer
// added up). The check is an event order: the cut comes before a header
// timeout has run from the first byte, the earliest moment the old
// behaviour could cut (0.95 of a timeout of slack for a busy machine).
func TestHeaderTimeoutRunsFromAccept(t *testing.T) {
	const rht = 3 * time.Second
	d := config.Duration(rht)
	h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0",
		Transport: &static.EntryTransport{RespondingTimeouts: &static.RespondingTimeouts{ReadHeaderTimeout: &d}}}}, nil)
	h.Apply(`http: {}`, generation.Options{})
	c, err := net.Dial("tcp", h.Addr("web"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(rht * 95 / 100)
	io.WriteString(c, "G")
	c.SetReadDeadline(time.Now().Add(rht))
	_, err = io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("connection still open a header timeout after its first byte: the timeout did not run from the accept")
	}
}

// The documented head limit is the real one: a head of exactly
// maxHeaderBytes (64 KiB) bytes, CRLFs included, is served; one byte more
// gets 431 and the connection closes. (net/http's limit was 68 KiB.)
func TestHeadLimitIsExact(t *testing.T) {
	be := newCaptureBackend(t)
	h := newHarness(t, nil, nil)
	catchAll(h, be.URL, "")
	head := func(size int) string {
		prefix := "GET / HTTP/1.1\r\nHost: app\r\nX-Fill: "
		return prefix + strings.Repeat("f", size-len(prefix)-4) + "\r\n\r\n"
	}
	for _, tt := range []struct {
		size, status int
		closed       bool
	}{{64 << 10, 200, false}, {64<<10 + 1, 431, true}} {
		raw := head(tt.size)
		if len(raw) != tt.size {
			t.Fatalf("built %d bytes, want %d", len(raw), tt.size)
		}
		statuses, closed := rawExchange(t, h.Addr("web"), raw, 1)
		if len(statuses) != 1 || statuses[0] != tt.status || closed != tt.closed {
			t.Errorf("%d-byte head: statuses %v closed=%v; want %d closed=%v", tt.size, statuses, closed, tt.status, tt.closed)
		}
	}
}

// Expect: 100-continue: 100 Continue comes only once the request is
// forwarded and its body read; the upload then reaches the backend.
func TestExpectContinueThroughProxy(t *testing.T) {
	be := newCaptureBackend(t)
	h := newHarness(t, nil, nil)
	catchAll(h, be.URL, "")
	c, err := net.Dial("tcp", h.Addr("web"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "PUT /up HTTP/1.1\r\nHost: app\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 100 {
		t.Fatalf("want 100 Continue first, got %v %v", resp, err)
	}
	io.WriteString(c, "hello")
	resp, err = http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("want 200 after the body, got %v %v", resp, err)
	}
	resp.Body.Close()
	if got := be.take(); len(got) != 1 || !strings.Contains(got[0], "body=hello") {
		t.Fatalf("backend received %q", got)
	}
}
