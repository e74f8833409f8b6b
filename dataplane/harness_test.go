package dataplane

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// harness is a real Server with real listeners over a Pool, compiling
// configurations through router.Compile the way cmd/gantry does.
type harness struct {
	t      testing.TB
	log    *slog.Logger
	pool   *generation.Pool
	active *router.Active
	srv    *Server
	eps    map[string]*static.EntryPoint
	obs    observe.Observer

	mu  sync.Mutex
	gen *generation.Generation
}

// testLogger logs to t at debug level.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// newHarness starts a Server on eps (":0" addresses); nil eps means one
// entrypoint "web" on 127.0.0.1:0. Cleanup shuts everything down.
func newHarness(t testing.TB, eps map[string]*static.EntryPoint, obs observe.Observer) *harness {
	t.Helper()
	if eps == nil {
		eps = map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}}
	}
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = testLogger(t)
	}
	h := &harness{t: t, log: log, pool: generation.NewPool(log, generation.PoolOptions{}), active: router.NewActive(), eps: eps, obs: obs}
	srv, err := NewServer(log, h.active, eps, obs)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	srv.setHostname("gantry-test")
	if err := srv.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	h.srv = srv
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		h.mu.Lock()
		if h.gen != nil {
			h.gen.Close()
		}
		h.mu.Unlock()
		h.pool.Close()
	})
	return h
}

// apply decodes the YAML dynamic configuration (names already qualified),
// compiles it with a new Generation, swaps it in and closes the previous
// generation. It returns the table (for its Report).
func (h *harness) apply(yaml string, opts generation.Options) *router.Table {
	h.t.Helper()
	c, err := config.Decode([]byte(yaml), config.YAML)
	if err != nil {
		h.t.Fatalf("decode config: %v\n%s", err, yaml)
	}
	m := &providers.Merged{Version: fmt.Sprint(time.Now().UnixNano()), Config: c}
	if opts.Log == nil {
		opts.Log = h.log
	}
	if opts.Observer == nil {
		opts.Observer = h.obs
	}
	g := generation.New(h.pool, m, opts)
	var eps []router.EntryPoint
	for name, ep := range h.eps {
		eps = append(eps, router.EntryPoint{Name: name, AsDefault: ep.AsDefault})
	}
	internal, err := RedirectRoutes(h.eps)
	if err != nil {
		h.t.Fatalf("RedirectRoutes: %v", err)
	}
	tbl := router.Compile(context.Background(), m, g, router.Options{EntryPoints: eps, Internal: internal})
	h.active.Swap(tbl)
	h.mu.Lock()
	old := h.gen
	h.gen = g
	h.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return tbl
}

// addr returns "127.0.0.1:port" of entrypoint ep.
func (h *harness) addr(ep string) string {
	a := h.srv.Addrs(ep)
	if len(a) == 0 {
		h.t.Fatalf("no address for entrypoint %s", ep)
	}
	return a[0].String()
}

// get sends GET http://<ep addr>path with Host host and returns status and body.
func (h *harness) get(ep, host, path string) (int, string) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+h.addr(ep)+path, nil)
	req.Host = host
	resp, err := plainClient.Do(req)
	if err != nil {
		h.t.Fatalf("GET %s%s: %v", host, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var plainClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: false, MaxIdleConnsPerHost: 16}}

// closeIdle releases the shared test client's idle connections (goleak).
func closeIdle() { plainClient.CloseIdleConnections() }

// eventually polls cond every 10ms until it holds or 10s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// deadAddr returns a loopback address nothing listens on.
func deadAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	_ = l.Close()
	return a
}

// tlsClient trusts nothing and records the handshake; tests check the
// served certificate themselves.
func tlsDial(t testing.TB, addr, sni string, alpn ...string) *tls.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{ServerName: sni, InsecureSkipVerify: true, NextProtos: alpn}) //nolint:gosec // test inspects the certificate itself
	if err != nil {
		t.Fatalf("tls dial %s (sni %q): %v", addr, sni, err)
	}
	return c
}

// setHostname overrides the X-Forwarded-Server value.
func (s *Server) setHostname(h string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hostname = h
	for _, ep := range s.eps {
		ep.hostname = h
	}
}

// httptestServer is an httptest.Server (alias kept short for helpers).
type httptestServer = httptest.Server

func newTestServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

// acceptKey computes Sec-WebSocket-Accept (RFC 6455 §4.2.2).
func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// decodeYAML decodes a dynamic configuration into a Merged.
func decodeYAML(t testing.TB, y string) (*providers.Merged, error) {
	t.Helper()
	c, err := config.Decode([]byte(y), config.YAML)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return &providers.Merged{Version: "test", Config: c}, nil
}
