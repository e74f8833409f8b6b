// Package dptest is the end-to-end test harness of the data plane, shared
// by the tests of dataplane and dataplane/generation: a real entrypoint
// server (dataplane.Server) with real listeners over a generation.Pool,
// each configuration compiled by router.Compile into a new generation the
// way cmd/gantry does, and the backends, clients and observer those tests
// use. It does not import dataplane (the server and its internal routes
// are New's arguments), so dataplane's own tests use it as generation's
// external tests do. Only tests import it; its tests are theirs.
package dptest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/balance"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// Server is the entrypoint server a Harness drives: *dataplane.Server.
type Server interface {
	Start(ctx context.Context) error
	Shutdown(ctx context.Context) error
	Addrs(entryPoint string) []net.Addr
}

// NewServer makes a Harness's server serving the tables swapped into
// active on eps, reporting to obs (dataplane.NewServer, with whatever a
// test package sets before Start).
type NewServer[S Server] func(log *slog.Logger, active *router.Active, eps map[string]*static.EntryPoint, obs observe.Observer) (S, error)

// InternalRoutes returns the routes eps add to every table
// (dataplane.RedirectRoutes).
type InternalRoutes func(eps map[string]*static.EntryPoint) ([]router.InternalRoute, error)

// Harness is a started server over a Pool: Apply swaps in configurations.
// The fields are what New made them; tests read them (and add to EPs
// before Srv.AddEntryPoint).
type Harness[S Server] struct {
	T      testing.TB
	Log    *slog.Logger
	Pool   *generation.Pool
	Active *router.Active
	Srv    S
	EPs    map[string]*static.EntryPoint
	Obs    observe.Observer

	internal InternalRoutes
	mu       sync.Mutex
	gen      *generation.Generation
}

// Logger logs to t at debug level.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// New starts the server newServer makes on eps (":0" addresses; nil
// means one entrypoint "web" on 127.0.0.1:0), reporting to obs (nil:
// none); internal gives the routes Apply adds. The server logs to t with
// -v. A failure to make or start it fails the test. t's cleanup shuts the
// server down (10 s at most; an error fails the test), then closes the
// last generation and the pool.
func New[S Server](t testing.TB, eps map[string]*static.EntryPoint, obs observe.Observer, newServer NewServer[S], internal InternalRoutes) *Harness[S] {
	t.Helper()
	if eps == nil {
		eps = map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}}
	}
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = Logger(t)
	}
	h := &Harness[S]{T: t, Log: log, Pool: generation.NewPool(log, generation.PoolOptions{}), Active: router.NewActive(), EPs: eps, Obs: obs, internal: internal}
	srv, err := newServer(log, h.Active, eps, obs)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	h.Srv = srv
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
		h.Pool.Close()
	})
	return h
}

// Apply decodes the YAML dynamic configuration (names already qualified),
// compiles it with a new Generation (opts' Log and Observer default to the
// harness's), swaps it in and closes the previous generation. It returns
// the table (for its Report). A configuration that does not decode fails
// the test.
func (h *Harness[S]) Apply(yaml string, opts generation.Options) *router.Table {
	h.T.Helper()
	c, err := config.Decode([]byte(yaml), config.YAML)
	if err != nil {
		h.T.Fatalf("decode config: %v\n%s", err, yaml)
	}
	m := &providers.Merged{Version: fmt.Sprint(time.Now().UnixNano()), Config: c}
	if opts.Log == nil {
		opts.Log = h.Log
	}
	if opts.Observer == nil {
		opts.Observer = h.Obs
	}
	g := generation.New(h.Pool, m, opts)
	var eps []router.EntryPoint
	for name, ep := range h.EPs {
		eps = append(eps, router.EntryPoint{Name: name, AsDefault: ep.AsDefault})
	}
	internal, err := h.internal(h.EPs)
	if err != nil {
		h.T.Fatalf("internal routes: %v", err)
	}
	tbl := router.Compile(context.Background(), m, g, router.Options{EntryPoints: eps, Internal: internal})
	h.Active.Swap(tbl)
	h.mu.Lock()
	old := h.gen
	h.gen = g
	h.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return tbl
}

// Generation returns the generation Apply swapped in last (nil before
// the first).
func (h *Harness[S]) Generation() *generation.Generation {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gen
}

// Addr returns "127.0.0.1:port" of entrypoint ep; none fails the test.
func (h *Harness[S]) Addr(ep string) string {
	a := h.Srv.Addrs(ep)
	if len(a) == 0 {
		h.T.Fatalf("no address for entrypoint %s", ep)
	}
	return a[0].String()
}

// Get sends GET http://<ep addr>path with Host host through Client and
// returns the status and body; a transport error fails the test.
func (h *Harness[S]) Get(ep, host, path string) (int, string) {
	h.T.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+h.Addr(ep)+path, nil)
	req.Host = host
	resp, err := Client.Do(req)
	if err != nil {
		h.T.Fatalf("GET %s%s: %v", host, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Backend returns the pool's status of the backend with URL u (the zero
// value when the pool has none).
func (h *Harness[S]) Backend(u string) balance.BackendStatus {
	for _, s := range h.Pool.Status() {
		if s.URL == u {
			return s
		}
	}
	return balance.BackendStatus{}
}

// Client is the keep-alive HTTP client of Get, shared by the tests.
var Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// CloseIdle closes Client's idle connections (before goleak looks).
func CloseIdle() { Client.CloseIdleConnections() }
