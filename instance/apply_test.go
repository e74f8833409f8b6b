package instance

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/store"
)

// Apply swaps in a new table, saves only when asked, and logs each problem
// once: when it appears, and "problem resolved" when it goes away.
func TestApplyLogsProblemsOnce(t *testing.T) {
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	db, err := store.Open(filepath.Join(t.TempDir(), "gantry.db"), 0, log)
	if err != nil {
		t.Fatal(err)
	}
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": {Address: ":80"}}}
	a := New(c, Options{Log: log, Store: db})
	defer a.Shutdown(context.Background())
	saved := func() int {
		revs, err := db.History(context.Background(), 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(revs)
	}

	bad := func(version string) *providers.Merged {
		cfg := config.New()
		cfg.HTTP.Routers["r@file"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`a`, `b`)", Service: "s@file"}}
		return &providers.Merged{Version: version, Config: cfg, Problems: []providers.Problem{
			{Provider: "file", Source: "/x.yml:3", Message: "bad thing", Severity: providers.SeverityError},
		}, Origins: map[string]string{"router r@file": "/x.yml:5:5", "rule router r@file": "/x.yml:6:13"}}
	}
	t1 := a.Apply(context.Background(), bad("v1"))
	if a.active.Load() != t1 || t1.Report().Count(router.StatusDisabled) != 1 {
		t.Fatalf("table not swapped in or router not disabled")
	}
	a.apply(context.Background(), bad("v2"), false)
	if n := saved(); n != 1 {
		t.Errorf("saved %d times, want 1 (save=false the second time)", n)
	}
	if n := strings.Count(logs.String(), "bad thing"); n != 1 {
		t.Errorf("configuration problem logged %d times, want 1:\n%s", n, logs.String())
	}
	// Two routing problems (the rule, the missing service), each logged once.
	if n := strings.Count(logs.String(), `msg="routing problem"`); n != 2 {
		t.Errorf("routing problems logged %d times, want 2:\n%s", n, logs.String())
	}
	// Each names where it is defined: the rule error the rule's line.
	if !strings.Contains(logs.String(), `source=/x.yml:6:13`) || !strings.Contains(logs.String(), `source=/x.yml:5:5`) {
		t.Errorf("routing problems do not name the file and line:\n%s", logs.String())
	}
	a.Apply(context.Background(), &providers.Merged{Version: "v3", Config: config.New()})
	if n := saved(); n != 2 {
		t.Errorf("saved %d times, want 2", n)
	}
	if n := strings.Count(logs.String(), `msg="problem resolved"`); n != 3 {
		t.Errorf("resolved lines: %d, want 3:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), `msg="config applied"`); n != 3 {
		t.Errorf("config applied lines: %d, want 3", n)
	}
}

// Apply saves a configuration, with the figures Options.Counts gives for
// its table, before it swaps the table in: whoever wakes on the old
// table's Replaced channel (the dashboard's WebSocket, whose page then
// re-reads /api/revisions) finds the new version stored. The listeners
// are told after the swap.
func TestApplySavesBeforeTheSwap(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(filepath.Join(t.TempDir(), "gantry.db"), 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}}}
	var counted *router.Table
	a := New(c, Options{Store: db, Counts: func(t *router.Table) *store.Counts {
		counted = t
		return &store.Counts{Routers: 7}
	}})
	defer a.Shutdown(ctx)
	newest := func() string {
		revs, err := db.History(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(revs) == 0 {
			return "none"
		}
		return revs[0].Version
	}
	var told []string // the live table's version and the newest saved, at each listener call
	if err := a.Start(ctx, Wiring{Listeners: []Listener{ListenerFunc(func(_ context.Context, m *providers.Merged, _ time.Time) {
		told = append(told, fmt.Sprintf("%s live=%s saved=%s", m.Version, a.Active().Load().Version(), newest()))
	})}}); err != nil {
		t.Fatal(err)
	}
	old := a.Active().Load()
	woke := make(chan string)
	go func() { <-old.Replaced(); woke <- newest() }()
	tbl := a.Apply(ctx, &providers.Merged{Version: "v1", Config: config.New()})
	if v := <-woke; v != "v1" {
		t.Errorf("newest saved when the old table was replaced: %s, want v1", v)
	}
	if want := []string{"v1 live=v1 saved=v1"}; !slices.Equal(told, want) {
		t.Errorf("listeners told %q, want %q", told, want)
	}
	if counted != tbl {
		t.Errorf("Counts got another table than the one swapped in")
	}
	revs, err := db.History(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 1 || revs[0].Counts == nil || revs[0].Counts.Routers != 7 {
		t.Errorf("saved revision's counts: %+v, want Routers 7", revs)
	}
}

// A certificate file replaced while its configuration is applied, after
// the generation has read it (here: when its figures are taken for the
// save, just before the swap), is a change the certificate watcher
// reports, and the configuration is applied again: the watcher's
// reference is what the generation read, not what is on disk once it
// serves.
func TestApplyWatchesCertificatesFromWhatItRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	crt, key := filepath.Join(dir, "a.crt"), filepath.Join(dir, "a.key")
	writePair(t, crt, key, "one.test")
	db, err := store.Open(filepath.Join(dir, "gantry.db"), 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"websecure": {Address: "127.0.0.1:0"}}}
	replaced := false
	a := New(c, Options{Store: db, Counts: func(*router.Table) *store.Counts {
		if !replaced {
			replaced = true
			writePair(t, crt, key, "two.test")
		}
		return nil
	}})
	defer a.Shutdown(ctx)
	applied := make(chan string, 10)
	if err := a.Start(ctx, Wiring{Listeners: []Listener{ListenerFunc(func(_ context.Context, m *providers.Merged, _ time.Time) {
		applied <- m.Version
	})}}); err != nil {
		t.Fatal(err)
	}
	cfg := config.New()
	cfg.TLS = &config.TLSConfiguration{Certificates: []*config.CertAndStores{{Certificate: config.Certificate{CertFile: crt, KeyFile: key}}}}
	a.Apply(ctx, &providers.Merged{Version: "v1", Config: cfg})
	<-applied
	select {
	case v := <-applied: // Reapply, on the watcher's change
		if v != "v1" {
			t.Errorf("applied again %s, want v1", v)
		}
	case <-time.After(60 * time.Second): // the watcher polls every 5 s
		t.Fatal("the certificate replaced during the apply was never reported as changed")
	}
}

// writePair writes a self-signed certificate for cn and its key.
func writePair(t *testing.T, crt, key, cn string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A configuration applied before every provider has published says which
// it still waits for (a test or an operator waiting for the file
// provider's routers waits for a line without it); one applied after all
// have published says nothing.
func TestApplyLogNamesProvidersNotHeardFrom(t *testing.T) {
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": {Address: ":80"}}}
	a := New(c, Options{Log: log})
	defer a.Shutdown(context.Background())
	a.Apply(context.Background(), &providers.Merged{Version: "v1", Config: config.New(), Sources: map[string]providers.SourceState{
		"internal": {State: providers.StateOK}, "file": {State: providers.StateStarting}, "docker": {State: providers.StateStored},
	}})
	a.Apply(context.Background(), &providers.Merged{Version: "v2", Config: config.New(), Sources: map[string]providers.SourceState{
		"internal": {State: providers.StateOK}, "file": {State: providers.StateOK}, "docker": {State: providers.StateDown},
	}})
	lines := slices.DeleteFunc(strings.Split(logs.String(), "\n"), func(l string) bool { return !strings.Contains(l, `msg="config applied"`) })
	if len(lines) != 2 {
		t.Fatalf("config applied lines: %q", lines)
	}
	if !strings.Contains(lines[0], "waiting=docker,file") {
		t.Errorf("first line does not name the providers not heard from: %s", lines[0])
	}
	if strings.Contains(lines[1], "waiting=") {
		t.Errorf("second line names a provider waited for, all have published: %s", lines[1])
	}
}
