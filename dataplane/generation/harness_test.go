package generation

import (
	"context"
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
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// harness is a real Server with real listeners over a Pool, compiling
// configurations through router.Compile the way cmd/gantry does.
type harness struct {
	t      testing.TB
	log    *slog.Logger
	pool   *Pool
	active *router.Active
	srv    *dataplane.Server
	eps    map[string]*static.EntryPoint
	obs    observe.Observer

	mu  sync.Mutex
	gen *Generation
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
	h := &harness{t: t, log: log, pool: NewPool(log, PoolOptions{}), active: router.NewActive(), eps: eps, obs: obs}
	srv, err := dataplane.NewServer(log, h.active, eps, obs)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
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
//
//	It returns the table (for its Report).
func (h *harness) apply(yaml string, opts Options) *router.Table {
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
	g := New(h.pool, m, opts)
	var eps []router.EntryPoint
	for name, ep := range h.eps {
		eps = append(eps, router.EntryPoint{Name: name, AsDefault: ep.AsDefault})
	}
	internal, err := dataplane.RedirectRoutes(h.eps)
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

// newTestServer starts an httptest.Server serving h.
func newTestServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }
