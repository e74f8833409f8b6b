package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/file"
	"github.com/gantry-proxy/gantry/router"
)

func dialWS(t *testing.T, srv *httptest.Server) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/api/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// next reads messages until one of type typ arrives or the deadline passes.
func next(t *testing.T, c *websocket.Conn, typ string, deadline time.Time) WSMessage {
	t.Helper()
	_ = c.SetReadDeadline(deadline)
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for a %q message: %v", typ, err)
		}
		var m WSMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("bad message %s: %v", data, err)
		}
		if m.Type == typ {
			return m
		}
	}
}

const fileV1 = `http:
  routers:
    web:
      rule: Host(` + "`a.example`" + `)
      service: app
  services:
    app:
      loadBalancer:
        servers:
          - url: http://127.0.0.1:9
`

// TestWebSocketDiffAfterFileChange drives the real chain: a file on disk,
// the file provider watching it, the aggregator, router.Compile and
// router.Active. Editing the file must reach a connected client as a
// config message carrying the diff within a second.
func TestWebSocketDiffAfterFileChange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dynamic.yml")
	if err := os.WriteFile(path, []byte(fileV1), 0o644); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	fp, err := file.New(static.File{Directory: dir}, log)
	if err != nil {
		t.Fatal(err)
	}
	active := router.NewActive()
	agg := providers.NewAggregator(log, 20*time.Millisecond, fp)
	applied := make(chan string, 16)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = agg.Run(ctx, func(ctx context.Context, m *providers.Merged) {
			active.Swap(router.Compile(ctx, m, testBuilder{}, compileOpts))
			applied <- m.Version
		})
	})
	defer func() { cancel(); wg.Wait() }()
	select {
	case <-applied:
	case <-time.After(10 * time.Second):
		t.Fatal("the file provider's first snapshot was never applied")
	}

	a, err := New(Options{Tables: RouterTables(active), Sources: agg, Static: fixtureStatic()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	c := dialWS(t, srv)
	hello := next(t, c, "config", time.Now().Add(30*time.Second))
	if hello.Version != active.Load().Version() || hello.Changes != nil || hello.Overview.HTTP.Routers.Total != 1 {
		t.Fatalf("hello: version %s changes %v routers %d; want the live version, no changes, 1 router", hello.Version, hello.Changes, hello.Overview.HTTP.Routers.Total)
	}

	v2 := strings.Replace(fileV1, "  routers:\n", "  routers:\n    added:\n      rule: Path(`/new`)\n      service: app\n", 1)
	v2 = strings.Replace(v2, "Host(`a.example`)", "Host(`b.example`)", 1)
	wrote := time.Now()
	if err := os.WriteFile(path, []byte(v2), 0o644); err != nil {
		t.Fatal(err)
	}
	m := next(t, c, "config", wrote.Add(30*time.Second))
	if m.Changes == nil {
		t.Fatalf("config message without changes: %+v", m)
	}
	if got := fmt.Sprint(m.Changes.Routers.Added, m.Changes.Routers.Changed); got != "[added@file] [web@file]" {
		t.Errorf("router changes %s, want [added@file] [web@file]", got)
	}
	if m.Previous != hello.Version || m.Version != active.Load().Version() {
		t.Errorf("versions: previous %s version %s, want %s → %s", m.Previous, m.Version, hello.Version, active.Load().Version())
	}
	t.Logf("diff delivered %v after the write", time.Since(wrote))
}

func TestWebSocketHealthAndStats(t *testing.T) {
	live := observe.NewLive()
	f := newFixture(t, func(o *Options) { o.Live = live; o.StatsInterval = 20 * time.Millisecond; o.Now = time.Now })
	srv := httptest.NewServer(f.api.Handler())
	defer srv.Close()
	c := dialWS(t, srv)
	next(t, c, "config", time.Now().Add(30*time.Second))

	f.health.set("http://10.0.0.2:8080", true)
	h := next(t, c, "health", time.Now().Add(30*time.Second))
	if len(h.HealthChanges) != 1 || h.HealthChanges[0] != (HealthChange{URL: "http://10.0.0.2:8080", Up: true}) {
		t.Errorf("health changes %+v, want 10.0.0.2 up", h.HealthChanges)
	}

	// The slow error first: a sample taken while the requests are being
	// counted (every 20 ms, under the race detector on a loaded machine)
	// then holds it whenever it holds any of them.
	live.Request(&observe.RequestEvent{Router: "web@file", Service: "app@file", Status: 503, Duration: 40 * time.Millisecond})
	for range 50 {
		live.Request(&observe.RequestEvent{Router: "web@file", Service: "app@file", Status: 200, Duration: 2 * time.Millisecond})
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := next(t, c, "stats", deadline)
		r, ok := s.Routers["web@file"]
		if !ok || r.RequestsPerSecond == 0 {
			continue // an interval before the requests
		}
		if r.ErrorsPerSecond == 0 || r.P50Ms < 2 || r.P99Ms < 40 {
			t.Errorf("rates %+v: want errors, p50 >= 2ms, p99 >= 40ms", r)
		}
		if len(s.Servers) != 3 || s.Servers[0].InFlight != 3 {
			t.Errorf("servers %+v, want 3 with 10.0.0.1 at 3 in flight", s.Servers)
		}
		// The same sample, as the charts store it: total and per service.
		if s.Stats == nil || s.Stats.Total.RequestsPerSecond != r.RequestsPerSecond || s.Stats.Services["app@file"].RequestsPerSecond != r.RequestsPerSecond ||
			s.Stats.Routers["web@file"] != r || !s.Stats.At.Equal(s.At) {
			t.Errorf("stats %+v, want the router's rates also as the total and app@file's", s.Stats)
		}
		break
	}
}

// TestWebSocketSlowClient: a client that does not read must not hold up
// swaps, and once it reads it gets the latest version (intermediate ones
// may be skipped).
func TestWebSocketSlowClient(t *testing.T) {
	f := newFixture(t, nil)
	srv := httptest.NewServer(f.api.Handler())
	defer srv.Close()
	c := dialWS(t, srv)
	next(t, c, "config", time.Now().Add(30*time.Second))
	const swaps = 200
	base := f.m2.Config
	var last string
	for i := range swaps {
		cfg := *base
		h := *base.HTTP
		h.Routers = map[string]*config.Router{}
		for k, v := range base.HTTP.Routers {
			h.Routers[k] = v
		}
		h.Routers[fmt.Sprintf("r%03d@file", i)] = &config.Router{RouterCommon: config.RouterCommon{Rule: fmt.Sprintf("Path(`/%d`)", i), Service: "app@file"}}
		cfg.HTTP = &h
		m := merged(t, &cfg)
		f.tables.swap(m) // must never block on the client
		last = m.Version
	}
	got := 0
	for {
		m := next(t, c, "config", time.Now().Add(30*time.Second))
		got++
		if m.Version == last {
			break
		}
	}
	if got > swaps {
		t.Errorf("received %d config messages for %d swaps", got, swaps)
	}
	t.Logf("%d swaps, %d config messages", swaps, got)
}

func TestCloseEndsWebSockets(t *testing.T) {
	f := newFixture(t, nil)
	srv := httptest.NewServer(f.api.Handler())
	defer srv.Close()
	c := dialWS(t, srv)
	next(t, c, "config", time.Now().Add(30*time.Second))
	f.api.Close()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
				t.Errorf("got %v, want a going-away close", err)
			}
			break
		}
	}
	rec := do(t, f.api.Handler(), "GET", "/api/ws", nil, "Connection", "Upgrade", "Upgrade", "websocket")
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("upgrade after Close: %d, want 503", rec.Code)
	}
}

// lockedSources is a provider set whose states the test changes.
type lockedSources struct {
	mu sync.Mutex
	m  map[string]providers.SourceState
}

func (l *lockedSources) Sources() map[string]providers.SourceState {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]providers.SourceState{}
	for k, v := range l.m {
		out[k] = v
	}
	return out
}

func (l *lockedSources) set(name string, s providers.SourceState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[name] = s
}

// TestWebSocketProviderStateChange: a provider failing without a new
// configuration (Docker socket gone) still reaches the client live.
func TestWebSocketProviderStateChange(t *testing.T) {
	src := &lockedSources{m: fixtureSources()}
	f := newFixture(t, func(o *Options) { o.Sources = src; o.StatsInterval = 20 * time.Millisecond; o.Now = time.Now })
	srv := httptest.NewServer(f.api.Handler())
	defer srv.Close()
	c := dialWS(t, srv)
	next(t, c, "config", time.Now().Add(30*time.Second))
	src.set("file", providers.SourceState{State: "error", LastError: "open /etc/gantry/dynamic: permission denied", Restarts: 1})
	m := next(t, c, "providers", time.Now().Add(30*time.Second))
	var file *providerItem
	for i := range m.Providers {
		if m.Providers[i].Name == "file" {
			file = &m.Providers[i]
		}
	}
	if file == nil || file.State != "error" || !strings.Contains(file.LastError, "permission denied") || len(file.Problems) != 1 {
		t.Errorf("file provider %+v, want state error with its last error and its problem", file)
	}
}

// TestWebSocketStatsFromSamplerAlone: an API given a Sampler (what the
// binary does: the process owns it) and no pool health still pushes each
// sample (the loop checked Options.Live, which is nil then).
func TestWebSocketStatsFromSamplerAlone(t *testing.T) {
	live := observe.NewLive()
	sampler := NewSampler(live, time.Hour, nil)
	f := newFixture(t, func(o *Options) { o.Sampler = sampler; o.Health = nil })
	srv := httptest.NewServer(f.api.Handler())
	defer srv.Close()
	c := dialWS(t, srv)
	next(t, c, "config", time.Now().Add(30*time.Second))
	live.Request(&observe.RequestEvent{Router: "web@file", Service: "app@file", Status: 200, Duration: time.Millisecond})
	sampler.sample()
	s := next(t, c, "stats", time.Now().Add(30*time.Second))
	if s.Stats == nil || s.Stats.Routers["web@file"].RequestsPerSecond == 0 {
		t.Errorf("stats %+v, want web@file's request", s.Stats)
	}
}
