package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/routertest"
	"github.com/gantry-proxy/gantry/store"
)

// t0 is the fixture's clock.
var t0 = time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)

// testBuilder builds trivial handlers and fails, like the real dataplane
// would, for the forwardAuth middleware whose TLS key is not a key.
type testBuilder struct{ routertest.Base }

func (testBuilder) Build(_ context.Context, name string, r *config.Router) (http.Handler, error) {
	for _, m := range r.Middlewares {
		if m == "fwd@file" {
			return nil, &router.ObjectError{Kind: "middleware", Name: m, Err: errors.New("forwardAuth: tls.key: not a PEM private key")}
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(name)) }), nil
}

var compileOpts = router.Options{EntryPoints: []router.EntryPoint{{Name: "traefik"}, {Name: "web", AsDefault: true}, {Name: "websecure"}}}

func loadMerged(t testing.TB, file string) *providers.Merged {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Decode(data, config.YAML)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return merged(t, c)
}

func merged(t testing.TB, c *config.Configuration) *providers.Merged {
	t.Helper()
	v, err := providers.Hash(c)
	if err != nil {
		t.Fatal(err)
	}
	return &providers.Merged{
		Version: v,
		Config:  c,
		Problems: []providers.Problem{{
			Provider: "docker", Source: "container web-1 label traefik.http.routers.broken.rule",
			Objects: []string{"router broken"}, Message: "rule: unbalanced parenthesis", Severity: providers.SeverityError,
		}, {
			Provider: "file", Source: "/etc/gantry/dynamic/app.yml:14:7",
			Objects: []string{"middleware hdr"}, Message: `unknown field "customRequestHeader"`, Severity: providers.SeverityWarning,
		}},
		Sources: fixtureSources(),
	}
}

func fixtureSources() map[string]providers.SourceState {
	return map[string]providers.SourceState{
		"file":          {State: "ok", LastPublish: t0.Add(-time.Minute), Problems: 1},
		"consulcatalog": {State: "error", LastError: `Get "http://127.0.0.1:8500/v1/catalog/services?index=7&token=SECRET-consul-token": dial tcp 127.0.0.1:8500: connect: connection refused`, LastErrorAt: t0, Restarts: 5},
		"docker":        {State: "error", LastPublish: t0.Add(-2 * time.Minute), LastError: "dial unix /var/run/docker.sock: connect: connection refused", LastErrorAt: t0.Add(-30 * time.Second), Restarts: 2, Problems: 1},
	}
}

// liveTables holds a router.Active, as the real binary does.
type liveTables struct{ active *router.Active }

func newLiveTables(t testing.TB, m *providers.Merged) liveTables {
	lt := liveTables{active: router.NewActive()}
	lt.swap(m)
	return lt
}

func (l liveTables) swap(m *providers.Merged) {
	l.active.Swap(router.Compile(context.Background(), m, testBuilder{}, compileOpts))
}

// fakeHealth is a pool with app@file's second server DOWN.
type fakeHealth struct {
	mu      sync.Mutex
	servers []Server
	changed chan struct{}
	reads   atomic.Int64
}

func newFakeHealth() *fakeHealth {
	return &fakeHealth{changed: make(chan struct{}), servers: []Server{
		{URL: "http://10.0.0.1:8080", Services: []string{"app@file"}, Up: true, InFlight: 3, LastCheck: t0},
		{URL: "http://10.0.0.2:8080", Services: []string{"app@file"}, Up: false, LastError: "GET /health: dial tcp 10.0.0.2:8080: connect: connection refused", LastCheck: t0},
		{URL: "http://10.0.0.3:80", Services: []string{"whoami@docker"}, Up: true},
	}}
}

func (h *fakeHealth) Servers() []Server {
	h.reads.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Server(nil), h.servers...)
}

func (h *fakeHealth) Changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

// set flips one server and wakes waiters.
func (h *fakeHealth) set(url string, up bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.servers {
		if h.servers[i].URL == url {
			h.servers[i].Up = up
		}
	}
	close(h.changed)
	h.changed = make(chan struct{})
}

type fakeSources map[string]providers.SourceState

func (f fakeSources) Sources() map[string]providers.SourceState { return f }

func fixtureStatic() *static.Configuration {
	return &static.Configuration{
		EntryPoints: map[string]*static.EntryPoint{
			"web":       {Address: ":80", AsDefault: true},
			"websecure": {Address: ":443", HTTP: &static.EntryHTTP{TLS: &config.RouterTLSConfig{}}},
			"traefik":   {Address: "127.0.0.1:8080"},
		},
		Providers: &static.Providers{File: &static.File{Directory: "/etc/gantry/dynamic"}, Docker: &static.Docker{}},
		Metrics:   &static.Metrics{Prometheus: &static.Prometheus{}},
		AccessLog: &static.AccessLog{},
		API:       &static.API{},
	}
}

type fixture struct {
	api    *API
	tables liveTables
	health *fakeHealth
	db     *store.DB
	m1, m2 *providers.Merged
}

// newFixture builds an API over a real router table, a real bbolt store
// holding two revisions (m1 then m2, m2 live), fake pool health and fake
// provider states.
func newFixture(t *testing.T, mutate func(*Options)) *fixture {
	t.Helper()
	f := &fixture{health: newFakeHealth()}
	f.m2 = loadMerged(t, "merged.yml")
	f.m1 = loadMerged(t, "merged.yml")
	delete(f.m1.Config.HTTP.Routers, "gated@file")
	delete(f.m1.Config.HTTP.Middlewares, "hdr@file")
	f.m1.Config.HTTP.Routers["old@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Path(`/old`)", Service: "app@file"}}
	f.m1.Config.HTTP.Routers["web@file"] = &config.Router{RouterCommon: config.RouterCommon{EntryPoints: []string{"web"}, Rule: "Host(`example.com`)", Service: "app@file"}}
	f.m1 = merged(t, f.m1.Config)
	db, err := store.Open(filepath.Join(t.TempDir(), "gantry.db"), 10, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	f.db = db
	if err := db.SaveApplied(context.Background(), f.m1, t0.Add(-time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveApplied(context.Background(), f.m2, t0, nil); err != nil {
		t.Fatal(err)
	}
	f.tables = newLiveTables(t, f.m2)
	opts := Options{
		Static: fixtureStatic(), Tables: RouterTables(f.tables.active), Health: f.health,
		Sources: fakeSources(fixtureSources()), History: db,
		Version: "v0.1.0", StartDate: t0.Add(-24 * time.Hour), Now: func() time.Time { return t0 },
	}
	if mutate != nil {
		mutate(&opts)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	f.api = a
	return f
}
