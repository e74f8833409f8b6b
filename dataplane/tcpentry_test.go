package dataplane

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// TCP routers through a real Server: a HostSNI TLS passthrough router on
// an entrypoint that also serves plain HTTP, and a ClientIP router on
// another one whose connection survives swaps that keep its router and is
// closed a grace period after the router goes (run under -race in CI).
func TestTCPRoutingThroughServer(t *testing.T) {
	eps := map[string]*static.EntryPoint{
		"web": {Address: "127.0.0.1:0"},
		"raw": {Address: "127.0.0.1:0", Transport: &static.EntryTransport{LifeCycle: &static.LifeCycle{GraceTimeOut: 300 * 1e6}}},
	}
	rec := &dptest.Recorder{}
	h := newHarness(t, eps, rec)
	a, b := dptest.TCPEchoBackend(t, "a:"), dptest.TCPEchoBackend(t, "b:")
	w := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "http ok") }))
	t.Cleanup(w.Close)
	conf := func(router string) string {
		return fmt.Sprintf(`
tcp:
  routers:
    %s:
      entryPoints: [raw]
      rule: ClientIP(`+"`127.0.0.0/8`"+`)
      service: a
    pass:
      entryPoints: [web]
      rule: HostSNI(`+"`pass.test`"+`)
      service: b
      tls:
        passthrough: true
  services:
    a:
      loadBalancer:
        servers: [{address: %q}]
    b:
      loadBalancer:
        servers: [{address: %q}]
http:
  routers:
    site:
      entryPoints: [web]
      rule: PathPrefix(`+"`/`"+`)
      service: site
  services:
    site:
      loadBalancer:
        servers: [{url: %q}]
`, router, a, b, w.URL)
	}
	tbl := h.Apply(conf("r1"), generation.Options{})
	if st := tbl.Report().TCPRouters["r1"]; st == nil || st.Status != "enabled" {
		t.Fatalf("r1: %+v", st)
	}
	c, err := net.Dial("tcp", h.Addr("raw"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := dptest.LineTrip(t, c, "one"); got != "a:one" {
		t.Fatalf("raw: %q", got)
	}
	open := rec.Conns("raw/tcp")
	if open != 1 {
		t.Errorf("open TCP connections on raw: %d, want 1", open)
	}
	// Plain HTTP still served on the entrypoint that has a TLS TCP router.
	if code, body := h.Get("web", "x.test", "/"); code != 200 || body != "http ok" {
		t.Fatalf("http next to tcp: %d %q", code, body)
	}
	// A TLS ClientHello for pass.test is passed through untouched: the
	// backend sees the handshake bytes (0x16 record), not plaintext.
	raw, err := net.Dial("tcp", h.Addr("web"))
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(raw, &tls.Config{ServerName: "pass.test", InsecureSkipVerify: true})
	_ = tc.SetDeadline(time.Now().Add(2 * time.Second))
	if err := tc.Handshake(); err == nil {
		t.Fatal("handshake with a plain echo server succeeded")
	}
	raw.Close()
	for i := range 5 {
		h.Apply(conf("r1")+fmt.Sprintf("\n# swap %d\n", i), generation.Options{})
		if got := dptest.LineTrip(t, c, fmt.Sprint(i)); got != fmt.Sprintf("a:%d", i) {
			t.Fatalf("after swap %d: %q", i, got)
		}
	}
	h.Apply(conf("r2"), generation.Options{}) // r1 removed
	removed := time.Now()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 1))
	if ne, ok := errors.AsType[net.Error](err); err == nil || ok && ne.Timeout() || time.Since(removed) < 250*time.Millisecond {
		t.Fatalf("removed router's connection: err %v after %v, want closed after the 300ms grace", err, time.Since(removed))
	}
	c2, err := net.Dial("tcp", h.Addr("raw"))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got := dptest.LineTrip(t, c2, "new"); got != "a:new" {
		t.Fatalf("r2: %q", got)
	}
}

// On an entrypoint with TCP routers, a connection handed back to HTTPS
// (its ClientHello matched no TCP router) still has readHeaderTimeout for
// its handshake: a client that stops within its first ClientHello record
// (or after it) is cut, not held forever (slowloris through the TCP
// router's peek, which cleared the deadline).
func TestStalledHelloHandedBackToHTTPSIsCut(t *testing.T) {
	rht := config.Duration(200 * time.Millisecond)
	h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0",
		Transport: &static.EntryTransport{RespondingTimeouts: &static.RespondingTimeouts{ReadHeaderTimeout: &rht}}}}, &dptest.Recorder{})
	b := dptest.TCPEchoBackend(t, "b:")
	h.Apply(fmt.Sprintf(`
tcp:
  routers:
    pass:
      entryPoints: [web]
      rule: HostSNI(`+"`pass.test`"+`)
      service: b
      tls:
        passthrough: true
  services:
    b:
      loadBalancer:
        servers: [{address: %q}]
`, b), generation.Options{})
	for _, partial := range []string{
		"\x16\x03\x01\x00\x05\x01\x00\x00\xff\xff", // a whole record, the handshake message announced longer
		"\x16\x03\x01\x00\x40\x01\x00",             // a record cut short
	} {
		c, err := net.Dial("tcp", h.Addr("web"))
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, partial)
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		start := time.Now()
		_, err = io.ReadAll(c)
		c.Close()
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("partial hello %q: connection still open after 3s (readHeaderTimeout 200ms)", partial)
		}
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Errorf("partial hello %q: closed after %v, before the header timeout", partial, d)
		}
	}
}

// A connection routed by a table that was replaced (its router removed)
// before the connection reached the entrypoint's watcher is closed after
// the grace period all the same: the watcher saw that swap before the
// connection was registered.
func TestTCPConnRoutedByReplacedTableIsClosed(t *testing.T) {
	eps := map[string]*static.EntryPoint{"raw": {Address: "127.0.0.1:0", Transport: &static.EntryTransport{LifeCycle: &static.LifeCycle{GraceTimeOut: 100 * 1e6}}}}
	h := newHarness(t, eps, nil)
	conf := func(router string) string {
		return fmt.Sprintf(`
tcp:
  routers:
    %s:
      entryPoints: [raw]
      rule: HostSNI(`+"`*`"+`)
      service: a
  services:
    a:
      loadBalancer:
        servers: [{address: "127.0.0.1:9"}]
`, router)
	}
	old := h.Apply(conf("r1"), generation.Options{})
	h.Apply(conf("r2"), generation.Options{}) // r1 removed
	ep := h.Srv.eps["raw"]
	if !ep.tcpLive.empty() {
		t.Fatal("connections registered before any was served")
	}
	time.Sleep(50 * time.Millisecond) // let the watcher see the swap first (the race this covers)
	server, client := net.Pipe()
	defer client.Close()
	live := ep.tcpLive.add(old, "r1", server)
	defer ep.tcpLive.remove(live)
	_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := client.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("connection of the removed router: read %v, want EOF (closed after the grace period)", err)
	}
}
