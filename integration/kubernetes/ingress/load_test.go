package ingress

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// load sends GETs to url (Host host) from workers goroutines over
// keep-alive connections until stopped, counting answers. Each worker
// sends at most one request per loadPace (4 workers: about 500 req/s, the
// issue's load), so the suite does not starve a shared machine.
type load struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	firstErr   string
	seen       map[string]int64 // whoami name -> answers
	cancel     context.CancelFunc
	wg         sync.WaitGroup
}

// loadPace is the least time between two requests of one load worker.
const loadPace = 8 * time.Millisecond

func startLoad(url, host string, workers int) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel, seen: map[string]int64{}}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	for range workers {
		l.wg.Go(func() {
			tick := time.NewTicker(loadPace)
			defer tick.Stop()
			for ctx.Err() == nil {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				req.Host = host
				resp, err := client.Do(req)
				if ctx.Err() != nil {
					return
				}
				var body []byte
				if err == nil {
					body, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d: %.200s", resp.StatusCode, body)
					}
				}
				if err != nil {
					l.failed.Add(1)
					l.mu.Lock()
					if l.firstErr == "" {
						l.firstErr = err.Error()
					}
					l.mu.Unlock()
					continue
				}
				l.ok.Add(1)
				_, rest, _ := strings.Cut(string(body), "Name: ")
				name, _, _ := strings.Cut(rest, "\n")
				l.mu.Lock()
				l.seen[strings.TrimSpace(name)]++
				l.mu.Unlock()
			}
		})
	}
	return l
}

// count returns how many answers came from whoami name so far.
func (l *load) count(name string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[name]
}

// stop ends the load and fails t when any request failed or none
// succeeded.
func (l *load) stop(t *testing.T) {
	t.Helper()
	l.cancel()
	l.wg.Wait()
	t.Logf("load: %d answered, %d failed", l.ok.Load(), l.failed.Load())
	if l.failed.Load() != 0 {
		t.Errorf("%d requests failed (first: %s)", l.failed.Load(), l.firstErr)
	}
	if l.ok.Load() == 0 {
		t.Error("no request answered")
	}
}

// wsConn is a WebSocket through gantry to whoami's /ws echo.
type wsConn struct{ c *websocket.Conn }

func dialWS(t *testing.T, addr, host string) *wsConn {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial("ws://"+addr+"/ws", http.Header{"Host": []string{host}})
	if err != nil {
		t.Fatalf("websocket through gantry: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &wsConn{c}
}

// echo sends msg and wants it back.
func (w *wsConn) echo(msg string) error {
	_ = w.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_ = w.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := w.c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		return fmt.Errorf("websocket write: %w", err)
	}
	_, got, err := w.c.ReadMessage()
	if err != nil {
		return fmt.Errorf("websocket read: %w", err)
	}
	if string(got) != msg {
		return fmt.Errorf("websocket echoed %q, want %q", got, msg)
	}
	return nil
}

// servers returns the server URLs gantry has for HTTP service name.
func servers(g *harness.Gantry, name string) (string, error) {
	r, err := harness.Get("http://" + g.EntryPoints["traefik"] + "/api/http/services/" + name)
	if err != nil {
		return "", err
	}
	if r.StatusCode != http.StatusOK {
		return "", fmt.Errorf("service %s: %d", name, r.StatusCode)
	}
	return r.Body, nil
}
