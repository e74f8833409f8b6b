package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// capDynamic routes app.test to a whoami.
const capDynamic = `
http:
  routers:
    app:
      rule: Host(` + "`app.test`" + `)
      service: app
  services:
    app:
      loadBalancer:
        servers: [{url: "http://%s"}]
`

// keepAlive is a raw HTTP/1.1 client connection kept open between requests.
type keepAlive struct {
	c  net.Conn
	br *bufio.Reader
}

// dialKeepAlive opens a connection to addr.
func dialKeepAlive(addr string) (*keepAlive, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &keepAlive{c: c, br: bufio.NewReader(c)}, nil
}

// get sends GET / for host and returns the status; the connection stays
// open. The answer is awaited for up to timeout.
func (k *keepAlive) get(host string, timeout time.Duration) (int, error) {
	_ = k.c.SetDeadline(time.Now().Add(timeout))
	defer k.c.SetDeadline(time.Time{})
	if _, err := fmt.Fprintf(k.c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(k.br, nil)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}

// closedByPeer reports whether the server closed the connection (end of
// file or reset) within timeout.
func (k *keepAlive) closedByPeer(timeout time.Duration) bool {
	_ = k.c.SetReadDeadline(time.Now().Add(timeout))
	_, err := k.br.ReadByte()
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

// Issue 23, the connection cap: with maxConnections 50 and 50 idle
// keep-alive clients, a new client is answered at once (it waited for
// idleTimeout before) and the oldest idle connection, only it, is closed to
// make room, as nginx reuses idle keep-alive connections when
// worker_connections run out.
func TestConnectionCapClosesOldestIdle(t *testing.T) {
	const capN = 50
	w := harness.StartWhoami(t, "cap")
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(capDynamic, w))
	addr := harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: %q
    transport:
      maxConnections: %d
providers:
  file:
    directory: %q
log:
  level: DEBUG
`, addr, capN, dyn))
	g.WaitOutput(t, wait, "config applied")
	harness.TryGet(t, wait, "http://"+addr+"/", harness.Host("app.test"), harness.StatusIs(200))

	idle := make([]*keepAlive, capN)
	for i := range idle {
		k, err := dialKeepAlive(addr)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		defer k.c.Close()
		if code, err := k.get("app.test", wait); err != nil || code != 200 {
			t.Fatalf("client %d: status %d, %v", i, code, err)
		}
		idle[i] = k
		if i == 0 {
			// The first one is the oldest idle: its server goroutine marks
			// the start of its idle wait after writing the response, and
			// gets time to do so before the next client is served.
			time.Sleep(300 * time.Millisecond)
		}
	}
	// Every slot is held by an idle keep-alive connection: a new client is
	// served, not left in the backlog until one of them times out.
	nu, err := dialKeepAlive(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nu.c.Close()
	if code, err := nu.get("app.test", wait); err != nil || code != 200 {
		t.Fatalf("new client at the cap: status %d, %v (want 200)", code, err)
	}
	if !idle[0].closedByPeer(wait) {
		t.Fatal("the oldest idle connection is still open after a new client took its slot")
	}
	// The others keep their connection: each still gets answered on it.
	for i, k := range idle[1:] {
		if code, err := k.get("app.test", wait); err != nil || code != 200 {
			t.Errorf("idle client %d (not the oldest): status %d, %v (want 200 on its open connection)", i+1, code, err)
		}
	}
}

// Issue 23: at file-descriptor exhaustion the API and /ping stayed
// unreachable. With an open-file limit of 256 and the web entrypoint
// flooded by 400 keep-alive clients, the default caps (derived from the
// limit) keep descriptors for the traefik entrypoint: /ping and the API
// answer, and a new web client is still served.
func TestFDLimitKeepsAPIReachable(t *testing.T) {
	const flood = 400
	w := harness.StartWhoami(t, "fd")
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(capDynamic, w))
	web, api := harness.FreeAddr(t), harness.FreeAddr(t)
	g := harness.StartWith(t, harness.Options{NoFile: 256, Static: fmt.Sprintf(`
entryPoints:
  web:
    address: %q
  traefik:
    address: %q
api:
  insecure: true
ping: {}
providers:
  file:
    directory: %q
`, web, api, dyn)})
	g.WaitOutput(t, wait, "config applied")
	harness.TryGet(t, wait, "http://"+web+"/", harness.Host("app.test"), harness.StatusIs(200))

	var (
		mu      sync.Mutex
		clients []*keepAlive
		wg      sync.WaitGroup
	)
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range clients {
			k.c.Close()
		}
	}()
	for range flood {
		k, err := dialKeepAlive(web)
		if err != nil {
			continue // the backlog is full: flooded enough
		}
		mu.Lock()
		clients = append(clients, k)
		mu.Unlock()
		wg.Go(func() { _, _ = k.get("app.test", 5*time.Second) })
	}
	wg.Wait()
	for _, path := range []string{"/ping", "/api/overview", "/api/http/routers"} {
		harness.TryGet(t, wait, "http://"+api+path, harness.StatusIs(200))
	}
	harness.TryGet(t, wait, "http://"+web+"/", harness.Host("app.test"), harness.StatusIs(200))
}
