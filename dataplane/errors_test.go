package dataplane

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/dataplane/proxy"
)

// Status mapping (case 032 and the issue): no route 404, no available
// server 503 "no available server", refused 502, response-header timeout
// 504, client gone 499 (observed, not sent).
func TestErrorStatuses(t *testing.T) {
	release := make(chan struct{})
	hang := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer close(release)
	obs := &dptest.Recorder{}
	h := newHarness(t, nil, obs)
	defer dptest.CloseIdle()
	dead := dptest.DeadAddr(t)
	h.Apply(fmt.Sprintf(`
http:
  routers:
    empty@file: {rule: "Host(`+"`empty.test`"+`)", service: empty@file}
    dead@file: {rule: "Host(`+"`dead.test`"+`)", service: dead@file}
    slow@file: {rule: "Host(`+"`slow.test`"+`)", service: slow@file}
    gone@file: {rule: "Host(`+"`gone.test`"+`)", service: gone@file}
  services:
    empty@file: {loadBalancer: {servers: []}}
    dead@file: {loadBalancer: {servers: [{url: "http://%s"}]}}
    slow@file: {loadBalancer: {serversTransport: fast@file, servers: [{url: %q}]}}
    gone@file: {loadBalancer: {servers: [{url: %q}]}}
  serversTransports:
    fast@file: {forwardingTimeouts: {responseHeaderTimeout: 200ms}}
`, dead, hang.URL, hang.URL), generation.Options{})
	tests := []struct {
		host   string
		status int
		body   string
	}{
		{"nothing.test", 404, "404 page not found"},
		{"empty.test", 503, "no available server"},
		{"dead.test", 502, "Bad Gateway"},
		{"slow.test", 504, "Gateway Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			code, body := h.Get("web", tt.host, "/")
			if code != tt.status || strings.TrimSpace(body) != tt.body {
				t.Errorf("got %d %q, want %d %q", code, body, tt.status, tt.body)
			}
		})
	}
	t.Run("client gone is 499", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+h.Addr("web")+"/", nil)
		req.Host = "gone.test"
		done := make(chan error, 1)
		go func() {
			resp, err := dptest.Client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		dptest.Eventually(t, "request to reach the backend", func() bool { return h.Backend(hang.URL).InFlight > 0 })
		cancel()
		<-done
		dptest.Eventually(t, "a 499 event", func() bool {
			_, ok := obs.Find(func(e observe.RequestEvent) bool {
				return e.Host == "gone.test" && e.Status == proxy.StatusClientClosedRequest
			})
			return ok
		})
	})
	ev, ok := obs.Find(func(e observe.RequestEvent) bool { return e.Host == "nothing.test" })
	if !ok || ev.Status != 404 || ev.Router != "" || ev.EntryPoint != "web" {
		t.Errorf("unmatched request event = %+v (found %v), want status 404, no router, entrypoint web", ev, ok)
	}
	ev, ok = obs.Find(func(e observe.RequestEvent) bool { return e.Host == "dead.test" })
	if !ok || ev.Status != 502 || ev.Router != "dead@file" || ev.Service != "dead@file" || ev.Upstream != "http://"+dead {
		t.Errorf("dead.test event = %+v, want 502 from router dead@file upstream http://%s", ev, dead)
	}
}

// RFC 9112 §6.1: a request with both Content-Length and Transfer-Encoding
// is refused (400, as nginx) and its connection closed after the response.
func TestContentLengthAndTransferEncodingCloses(t *testing.T) {
	be := dptest.EchoBackend(t, "b")
	h := newHarness(t, nil, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	c, err := net.Dial("tcp", h.Addr("web"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !resp.Close {
		t.Fatalf("got %d, Close=%v (Connection %q); want 400 and Connection: close", resp.StatusCode, resp.Close, resp.Header.Get("Connection"))
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("connection still open after CL+TE request: read %v, %v", n, err)
	}
}

// reliability.md §3.1 v32: an h2c upgrade is not forwarded; the request is
// served as plain HTTP/1.1.
func TestH2CUpgradeRefused(t *testing.T) {
	be := dptest.EchoBackend(t, "b")
	h := newHarness(t, nil, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	body := rawGet(t, "127.0.0.1", h.Addr("web"), "a", map[string]string{"Upgrade": "h2c", "HTTP2-Settings": "AAMAAABkAAQCAAAAAAIAAAAA", "Connection": "Upgrade, HTTP2-Settings"})
	for _, k := range []string{"Upgrade", "Http2-Settings", "Connection"} {
		if dptest.EchoHas(body, k) {
			t.Errorf("backend got %s: %q, want it stripped", k, dptest.EchoHeader(body, k))
		}
	}
}

// The entrypoint header limit (default 64 KiB, far below Go's 1 MiB)
// answers 431.
func TestMaxHeaderBytes(t *testing.T) {
	be := dptest.EchoBackend(t, "b")
	h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}}, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	for _, tt := range []struct {
		size   int
		status int
	}{{32 << 10, 200}, {100 << 10, 431}} {
		c, err := net.Dial("tcp", h.Addr("web"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: a\r\nX-Big: %s\r\nConnection: close\r\n\r\n", strings.Repeat("a", tt.size))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		c.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%d-byte header: got %d, want %d", tt.size, resp.StatusCode, tt.status)
		}
	}
}

// More than 100 header fields: 431 and the connection closed.
func TestHeaderFieldCap(t *testing.T) {
	be := dptest.EchoBackend(t, "b")
	h := newHarness(t, nil, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	for _, tt := range []struct{ fields, status int }{{98, 200}, {101, 431}} {
		c, err := net.Dial("tcp", h.Addr("web"))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString("GET / HTTP/1.1\r\nHost: a\r\n") // Host is not in Header
		for i := range tt.fields {
			fmt.Fprintf(&b, "X-H%d: v\r\n", i)
		}
		b.WriteString("\r\n")
		io.WriteString(c, b.String())
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		c.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%d fields: got %d, want %d", tt.fields, resp.StatusCode, tt.status)
		}
	}
}

// A backend dying mid-body must never look like a complete response
// (reliability.md F9): the client sees the connection aborted.
func TestBackendDiesMidBody(t *testing.T) {
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
		c.Close()
	}))
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	resp, err := dptest.Client.Get("http://" + h.Addr("web") + "/")
	if err != nil {
		return // aborted before the headers: fine
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Errorf("got a complete-looking body %q (status %d), want the transfer aborted", b, resp.StatusCode)
	}
}
