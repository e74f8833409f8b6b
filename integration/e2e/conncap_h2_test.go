package e2e

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

	"golang.org/x/net/http2"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// dialH2C opens an HTTP/2 connection with prior knowledge (h2c) to addr.
func dialH2C(t *testing.T, addr string) *http2.ClientConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := (&http2.Transport{AllowHTTP: true}).NewClientConn(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// h2Get sends GET path for app.test on cc.
func h2Get(ctx context.Context, cc *http2.ClientConn, addr, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return nil, err
	}
	req.Host = "app.test"
	return cc.RoundTrip(req)
}

// Issue 27: at the connection cap, an HTTP/2 connection without an open
// stream is closed to make room, as an idle HTTP/1.1 keep-alive one is
// (TestConnectionCapClosesOldestIdle); one with a stream open is not, even
// when it went idle before: its stream runs to the end.
func TestConnectionCapReclaimsIdleHTTP2(t *testing.T) {
	w := harness.StartWhoami(t, "cap2")
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(capDynamic, w))
	addr := harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: %q
    transport:
      maxConnections: 2
providers:
  file:
    directory: %q
log:
  level: DEBUG
`, addr, dyn))
	g.WaitOutput(t, wait, "config applied")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()

	// busy goes idle first (the oldest idle connection), then idle does;
	// then busy opens a stream that lasts a few seconds.
	busy, idle := dialH2C(t, addr), dialH2C(t, addr)
	for _, cc := range []*http2.ClientConn{busy, idle} {
		harness.Try(t, wait, func() error {
			resp, err := h2Get(ctx, cc, addr, "/")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != 200 {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		})
	}
	stream, err := h2Get(ctx, busy, addr, "/events?count=4&interval=1000")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	br := bufio.NewReader(stream.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "id: 0") {
		t.Fatalf("first event: %q, %v", line, err) // the stream is open on the server
	}

	// Both slots are held: a new client is served, and the connection
	// without a stream is the one closed to make room.
	nu, err := dialKeepAlive(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nu.c.Close()
	if code, err := nu.get("app.test", wait); err != nil || code != 200 {
		t.Fatalf("new client at the cap: status %d, %v (want 200)", code, err)
	}
	harness.Try(t, wait, func() error {
		if !idle.State().Closed {
			return fmt.Errorf("the idle HTTP/2 connection is still open after a new client took its slot")
		}
		return nil
	})
	rest, err := io.ReadAll(br)
	if err != nil || strings.Count(string(rest), "event: tick") != 4 {
		t.Errorf("the connection with a stream open was cut: read %q, %v (want the 4 events)", rest, err)
	}
}
