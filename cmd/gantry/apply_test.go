package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/store"
)

// apply swaps in a new table, saves only when asked, and logs each problem
// once: when it appears, and "problem resolved" when it goes away.
func TestApplyLogsProblemsOnce(t *testing.T) {
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	pool := dataplane.NewPool(log, dataplane.PoolOptions{})
	defer pool.Close()
	saved := 0
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": {Address: ":80"}}}
	a := &applier{log: log, pool: pool, active: router.NewActive(), store: saverFunc(func() { saved++ }), ropts: routerOptions(c)}
	defer a.close()

	bad := func(version string) *providers.Merged {
		cfg := config.New()
		cfg.HTTP.Routers["r@file"] = &config.Router{Rule: "Host(`a`, `b`)", Service: "s@file"}
		return &providers.Merged{Version: version, Config: cfg, Problems: []providers.Problem{
			{Provider: "file", Source: "/x.yml:3", Message: "bad thing", Severity: providers.SeverityError},
		}}
	}
	t1 := a.apply(context.Background(), bad("v1"), true)
	if a.active.Load() != t1 || t1.Report().Count(router.StatusDisabled) != 1 {
		t.Fatalf("table not swapped in or router not disabled")
	}
	a.apply(context.Background(), bad("v2"), false)
	if saved != 1 {
		t.Errorf("saved %d times, want 1 (save=false the second time)", saved)
	}
	if n := strings.Count(logs.String(), "bad thing"); n != 1 {
		t.Errorf("configuration problem logged %d times, want 1:\n%s", n, logs.String())
	}
	// Two routing problems (the rule, the missing service), each logged once.
	if n := strings.Count(logs.String(), `msg="routing problem"`); n != 2 {
		t.Errorf("routing problems logged %d times, want 2:\n%s", n, logs.String())
	}
	a.apply(context.Background(), &providers.Merged{Version: "v3", Config: config.New()}, true)
	if n := strings.Count(logs.String(), `msg="problem resolved"`); n != 3 {
		t.Errorf("resolved lines: %d, want 3:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), `msg="config applied"`); n != 3 {
		t.Errorf("config applied lines: %d, want 3", n)
	}
}

type saverFunc func()

func (f saverFunc) SaveApplied(context.Context, *providers.Merged, time.Time, *store.Counts) error {
	f()
	return nil
}

// The configuration is saved before its table is swapped in: whoever wakes
// on the old table's Replaced channel (the dashboard's WebSocket, whose
// page then re-reads /api/revisions) finds the new version stored.
func TestApplySavesBeforeTheSwap(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	pool := dataplane.NewPool(log, dataplane.PoolOptions{})
	defer pool.Close()
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"web": {Address: ":80"}}}
	active := router.NewActive()
	var atSave []string // the live table's version at each save
	a := &applier{log: log, pool: pool, active: active, ropts: routerOptions(c), store: saverFunc(func() {
		v := "none"
		if t := active.Load(); t != nil {
			v = t.Version()
		}
		atSave = append(atSave, v)
	})}
	defer a.close()
	a.apply(context.Background(), &providers.Merged{Version: "v1", Config: config.New()}, true)
	a.apply(context.Background(), &providers.Merged{Version: "v2", Config: config.New()}, true)
	if len(atSave) != 2 || atSave[0] == "v1" || atSave[1] != "v1" {
		t.Errorf("live table at each save %q: want each version saved while the previous table still serves", atSave)
	}
}

// A certificate file replaced while its configuration is applied, after
// the generation has read it (here: when it is saved, just before the
// swap), is a change the certificate watcher reports: its reference is
// what the generation read, not what is on disk once it serves.
func TestApplyWatchesCertificatesFromWhatItRead(t *testing.T) {
	dir := t.TempDir()
	crt, key := filepath.Join(dir, "a.crt"), filepath.Join(dir, "a.key")
	writePair(t, crt, key, "one.test")
	log := slog.New(slog.DiscardHandler)
	pool := dataplane.NewPool(log, dataplane.PoolOptions{})
	defer pool.Close()
	c := &static.Configuration{EntryPoints: map[string]*static.EntryPoint{"websecure": {Address: ":443"}}}
	cf := certs.NewCertFiles(log)
	a := &applier{log: log, pool: pool, active: router.NewActive(), ropts: routerOptions(c), certFiles: cf,
		store: saverFunc(func() { writePair(t, crt, key, "two.test") })}
	defer a.close()
	changed := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cf.Run(ctx, func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		})
	}()
	defer func() { cancel(); <-done }()
	cfg := config.New()
	cfg.TLS = &config.TLSConfiguration{Certificates: []*config.CertAndStores{{Certificate: config.Certificate{CertFile: crt, KeyFile: key}}}}
	a.apply(ctx, &providers.Merged{Version: "v1", Config: cfg}, true)
	select {
	case <-changed:
	case <-time.After(30 * time.Second): // the watcher polls every 5 s
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
