package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gantry-proxy/gantry/integration/harness"
)

const wsDynamic = `
http:
  routers:
    ws:
      rule: Host(` + "`chat.test`" + `)
      service: chat
%s
  services:
    chat:
      loadBalancer:
        servers: [{url: "http://%s"}]
`

// dialWS opens a WebSocket to path on host through the proxy at addr.
func dialWS(addr, host, path string) (*websocket.Conn, *http.Response, error) {
	d := websocket.Dialer{
		NetDialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var nd net.Dialer
			return nd.DialContext(ctx, "tcp", addr)
		},
		HandshakeTimeout: 10 * time.Second,
		Subprotocols:     []string{"chat.v1"},
	}
	return d.Dial("ws://"+host+path, http.Header{"Origin": {"https://chat.test"}})
}

func echoOnce(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatalf("write %q: %v", msg, err)
	}
	typ, got, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read echo of %q: %v", msg, err)
	}
	if typ != websocket.TextMessage || string(got) != msg {
		t.Fatalf("echo: got %d %q, want text %q", typ, got, msg)
	}
}

// Case 029: an established WebSocket survives 20 configuration swaps that
// add and remove an unrelated router, and an edit removing its own route;
// new handshakes succeed during the swaps and get 404 once the route is
// gone.
func TestWebSocketSurvivesConfigSwaps(t *testing.T) {
	w := harness.StartWhoami(t, "ws")
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(wsDynamic, "", w))
	addr := p.EntryPoints["web"]

	c, resp, err := dialWS(addr, "chat.test", "/ws")
	if err != nil {
		t.Fatalf("handshake through the proxy: %v (response %v)", err, resp)
	}
	defer c.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("X-Whoami-Name") != "ws" {
		t.Fatalf("handshake answer: %d %v", resp.StatusCode, resp.Header)
	}
	echoOnce(t, c, "before any swap")

	for i := range 20 {
		extra := ""
		if i%2 == 0 {
			extra = fmt.Sprintf("    extra-%d:\n      rule: Host(`extra%d.test`)\n      service: chat\n", i, i)
		}
		p.update(t, fmt.Sprintf(wsDynamic, extra, w))
		echoOnce(t, c, fmt.Sprintf("after swap %d", i+1))
		c2, _, err := dialWS(addr, "chat.test", "/echo")
		if err != nil {
			t.Fatalf("new handshake after swap %d: %v", i+1, err)
		}
		echoOnce(t, c2, "fresh")
		c2.Close()
	}

	// The route is removed: the open connection stays (Traefik keeps it),
	// new handshakes find no route.
	p.update(t, "http:\n  routers: {}\n")
	echoOnce(t, c, "route removed, still open")
	if _, resp, err := dialWS(addr, "chat.test", "/ws"); err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("handshake without a route: got %v / %v, want 404", err, resp)
	}
}

// Server-Sent Events reach the client one by one while the stream is still
// open: whoami sends one event per second for 1000 s; the test must see the
// first three events (ids 0, 1, 2, in order) long before the stream ends,
// which a proxy that buffers the response cannot do.
func TestServerSentEventsStream(t *testing.T) {
	w := harness.StartWhoami(t, "sse")
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    sse: {rule: "Host(`+"`sse.test`"+`)", service: sse}
  services:
    sse:
      loadBalancer:
        servers: [{url: "http://%s"}]
`, w))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL(t, "web", "/events?count=1000&interval=1000"), nil)
	req.Host = "sse.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("got %d %q", resp.StatusCode, ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var ids []string
	for len(ids) < 3 && sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, id)
		}
	}
	if strings.Join(ids, ",") != "0,1,2" {
		t.Fatalf("got event ids %v (scan error %v), want 0,1,2 while the stream is open", ids, sc.Err())
	}
}

// Case 029 and reliability.md §8.3: a WebSocket handshake reaches the
// backend with its upgrade headers and X-Forwarded-Proto "ws"; a non-101
// answer (whoami's echo page) is relayed as-is; an h2c upgrade is never
// passed on.
func TestUpgradeHeaders(t *testing.T) {
	w := harness.StartWhoami(t, "up")
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(wsDynamic, "", w))
	url := p.URL(t, "web", "/page")

	r := get(t, url, harness.Host("chat.test"),
		harness.Header("Connection", "keep-alive, Upgrade"),
		harness.Header("Upgrade", "websocket"),
		harness.Header("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
		harness.Header("Sec-WebSocket-Version", "13"),
		harness.Header("Sec-WebSocket-Protocol", "chat.v1"))
	if r.StatusCode != 200 {
		t.Fatalf("non-101 answer: got %d, want whoami's 200 relayed", r.StatusCode)
	}
	e := parseEcho(r.Body)
	for k, want := range map[string]string{
		"Upgrade":                "websocket",
		"Connection":             "Upgrade",
		"Sec-Websocket-Key":      "dGhlIHNhbXBsZSBub25jZQ==",
		"Sec-Websocket-Version":  "13",
		"Sec-Websocket-Protocol": "chat.v1",
		"X-Forwarded-Proto":      "ws",
	} {
		if got := e.header[k]; len(got) != 1 || got[0] != want {
			t.Errorf("backend header %s: got %q, want [%q]", k, got, want)
		}
	}

	r = get(t, url, harness.Host("chat.test"), harness.Header("Connection", "Upgrade, HTTP2-Settings"),
		harness.Header("Upgrade", "h2c"), harness.Header("HTTP2-Settings", "AAMAAABkAAQCAAAAAAIAAAAA"))
	if r.StatusCode == http.StatusSwitchingProtocols {
		t.Fatal("h2c upgrade was switched")
	}
	if r.StatusCode == 200 {
		if got := parseEcho(r.Body).header["Upgrade"]; len(got) != 0 {
			t.Errorf("h2c Upgrade header reached the backend: %q", got)
		}
	}
}

// Case 029, step 4: on SIGTERM an open WebSocket keeps working during
// graceTimeOut (here 2s) while new connections are refused; when the grace
// period ends gantry closes it and exits 0.
func TestWebSocketGraceOnShutdown(t *testing.T) {
	w := harness.StartWhoami(t, "wsg")
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(wsDynamic, "", w))
	addr := harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: %q
    transport:
      lifeCycle:
        graceTimeOut: 2s
providers:
  file:
    directory: %q
`, addr, dyn))
	g.WaitOutput(t, wait, "config applied")
	c, _, err := dialWS(addr, "chat.test", "/ws")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echoOnce(t, c, "before SIGTERM")
	if err := g.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	g.WaitOutput(t, wait, "shutting down")
	echoOnce(t, c, "during the grace period")
	harness.Try(t, wait, func() error {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return fmt.Errorf("new connections are still accepted")
		}
		return nil
	})
	if code := g.Wait(t, wait); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := c.ReadMessage(); err == nil {
		t.Error("WebSocket still open after gantry exited")
	}
}

// A second SIGTERM (Ctrl-C pressed again) ends the grace period at once:
// an open WebSocket would otherwise hold gantry for graceTimeOut (60s).
func TestSecondSignalCutsGrace(t *testing.T) {
	w := harness.StartWhoami(t, "ws2")
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(wsDynamic, "", w))
	addr := harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: %q
    transport:
      lifeCycle:
        graceTimeOut: 60s
providers:
  file:
    directory: %q
`, addr, dyn))
	g.WaitOutput(t, wait, "config applied")
	c, _, err := dialWS(addr, "chat.test", "/ws")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echoOnce(t, c, "open")
	if err := g.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	g.WaitOutput(t, wait, "shutting down")
	echoOnce(t, c, "still open during the grace period")
	if err := g.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := g.Wait(t, wait); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if !strings.Contains(g.Output(), "second signal") {
		t.Error("no log line for the second signal")
	}
}
