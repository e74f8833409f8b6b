package store_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func merged(t *testing.T, routers ...string) *providers.Merged {
	t.Helper()
	c := config.New()
	for _, r := range routers {
		c.HTTP.Routers[r] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`" + r + "`)", Service: "s"}}
	}
	c.HTTP.Services["s"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{Servers: []config.Server{{URL: "http://127.0.0.1:1"}}}}
	c.TLS.Certificates = []*config.CertAndStores{{Certificate: config.Certificate{CertFile: "c", KeyFile: "k"}}}
	m, err := providers.Merge(map[string]providers.Snapshot{"file": {Config: c, Problems: []providers.Problem{{Provider: "file", Source: "/a.yml:3:5", Message: "x"}}}})
	if err != nil {
		t.Fatal(err)
	}
	m.Sources = map[string]providers.SourceState{"file": {State: "ok", Restarts: 2}}
	return m
}

func open(t testing.TB, path string, history int) *store.DB {
	t.Helper()
	db, err := store.Open(path, history, discard)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

func TestSaveAndLastGoodSurviveReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sub", "gantry.db")
	db := open(t, path, 0)
	if _, err := db.LastGood(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LastGood on empty store: got %v, want ErrNotFound", err)
	}
	m := merged(t, "a", "b")
	at := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	if err := db.SaveApplied(ctx, m, at, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, path, 0)
	defer db.Close()
	if db.Warning() != "" {
		t.Errorf("unexpected warning %q", db.Warning())
	}
	got, err := db.LastGood(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(m, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("LastGood (-saved +got):\n%s", d)
	}
	if v, _ := providers.VersionOf(got.Config, got.Problems); v != m.Version {
		t.Errorf("stored config hashes to %s, want %s", v, m.Version)
	}
	rev, err := db.Revision(ctx, m.Version)
	if err != nil {
		t.Fatal(err)
	}
	if !rev.At.Equal(at) || rev.Routers != 2 || rev.Services != 1 || rev.Sources["file"].Restarts != 2 || len(rev.Problems) != 1 {
		t.Errorf("revision %+v: want at %v, 2 routers, 1 service, sources and problems", rev, at)
	}
}

func TestHistoryIsBoundedNewestFirst(t *testing.T) {
	ctx := t.Context()
	db := open(t, filepath.Join(t.TempDir(), "g.db"), 3)
	defer db.Close()
	var versions []string
	t0 := time.Unix(1_800_000_000, 0).UTC()
	for i, r := range []string{"a", "b", "c", "d", "e"} {
		m := merged(t, r)
		versions = append(versions, m.Version)
		if err := db.SaveApplied(ctx, m, t0.Add(time.Duration(i)*time.Second), nil); err != nil {
			t.Fatal(err)
		}
		// Saving the newest version again adds nothing.
		if err := db.SaveApplied(ctx, m, t0.Add(time.Hour), nil); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := db.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range hist {
		got = append(got, r.Version)
	}
	want := []string{versions[4], versions[3], versions[2]}
	if !slices.Equal(got, want) {
		t.Errorf("history %v, want %v (newest first, 3 kept)", got, want)
	}
	if hist[0].At != t0.Add(4*time.Second) {
		t.Errorf("newest at %v, want %v (a repeated save must not add or touch a revision)", hist[0].At, t0.Add(4*time.Second))
	}
	if h, _ := db.History(ctx, 2); len(h) != 2 {
		t.Errorf("History(2) returned %d revisions", len(h))
	}
	if _, err := db.Revision(ctx, versions[0]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("trimmed revision: got %v, want ErrNotFound", err)
	}
	// A version applied again later becomes the newest revision.
	if err := db.SaveApplied(ctx, merged(t, "c"), t0.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	last, _ := db.LastGood(ctx)
	if last.Version != versions[2] {
		t.Errorf("last good %s, want re-applied %s", last.Version, versions[2])
	}
}

// TestRecurringVersionIsEachApplication: A, B, C, B are four revisions,
// newest first, each with its own increasing Seq and its figures.
func TestRecurringVersionIsEachApplication(t *testing.T) {
	ctx := t.Context()
	db := open(t, filepath.Join(t.TempDir(), "g.db"), 10)
	defer db.Close()
	t0 := time.Unix(1_800_000_000, 0).UTC()
	for i, r := range []string{"a", "b", "c", "b"} {
		if err := db.SaveApplied(ctx, merged(t, r), t0.Add(time.Duration(i)*time.Second), &store.Counts{Routers: i + 1, Problems: i}); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := db.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 4 {
		t.Fatalf("history has %d revisions, want 4 (every application)", len(hist))
	}
	b := merged(t, "b").Version
	if hist[0].Version != b || hist[2].Version != b || hist[0].Seq <= hist[1].Seq || hist[1].Seq <= hist[2].Seq || hist[2].Seq <= hist[3].Seq {
		t.Errorf("history %+v, want b, c, b, a with decreasing seq", hist)
	}
	if c := hist[0].Counts; c == nil || c.Routers != 4 || c.Problems != 3 {
		t.Errorf("newest counts %+v, want the ones saved", c)
	}
}

func TestCorruptDatabaseIsMovedAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gantry.db")
	if err := os.WriteFile(path, []byte("this is not a bbolt file, it is half of a config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := open(t, path, 0)
	defer db.Close()
	if db.Warning() == "" {
		t.Fatal("no warning after recovering from a corrupt file")
	}
	aside, _ := filepath.Glob(path + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("moved-aside files %v, want 1", aside)
	}
	if b, _ := os.ReadFile(aside[0]); string(b) != "this is not a bbolt file, it is half of a config\n" {
		t.Errorf("moved-aside file content changed: %q", b)
	}
	if _, err := db.LastGood(t.Context()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LastGood after recovery: %v, want ErrNotFound", err)
	}
	if err := db.SaveApplied(t.Context(), merged(t, "a"), time.Now(), nil); err != nil {
		t.Errorf("save into the fresh store: %v", err)
	}
}

func TestTruncatedDatabaseIsMovedAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gantry.db")
	db := open(t, path, 0)
	if err := db.SaveApplied(t.Context(), merged(t, "a"), time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Zero the two meta pages, as a crash mid-write on a broken disk might.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 8192), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	db = open(t, path, 0)
	defer db.Close()
	if db.Warning() == "" {
		t.Error("no warning after recovering from zeroed meta pages")
	}
}

func TestUndecodableRevisionIsSkipped(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "gantry.db")
	db := open(t, path, 0)
	good := merged(t, "good")
	if err := db.SaveApplied(ctx, good, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = raw.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("revisions")).Put([]byte{0, 0, 0, 0, 0, 0, 0, 99}, []byte("garbage"))
	})
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	db = open(t, path, 0)
	defer db.Close()
	got, err := db.LastGood(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != good.Version {
		t.Errorf("last good %s, want %s (garbage newest revision skipped)", got.Version, good.Version)
	}
	if h, _ := db.History(ctx, 0); len(h) != 1 {
		t.Errorf("history has %d readable revisions, want 1", len(h))
	}
}

func TestLockedDatabaseIsNotMovedAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gantry.db")
	db := open(t, path, 0)
	defer db.Close()
	_, err := store.Open(path, 0, discard)
	if err == nil {
		t.Fatal("second Open of a locked database succeeded")
	}
	if aside, _ := filepath.Glob(path + ".corrupt-*"); len(aside) != 0 {
		t.Errorf("a locked (healthy) database was moved aside: %v", aside)
	}
}

func TestContextCancelled(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "g.db"), 0)
	defer db.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := db.SaveApplied(ctx, merged(t, "a"), time.Now(), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// Issue 15: the store holds secrets in clear: a file Gantry creates is
// 0600 in a directory it creates 0700, and a store other users can read is
// refused with a message saying what to do.
func TestStorePermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "gantry.db")
	db, err := store.Open(path, 0, discard)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s: mode %04o, want %04o", p, got, want)
		}
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(path, 0, discard)
	if err == nil || !strings.Contains(err.Error(), "accessible to other users (mode 0644)") || !strings.Contains(err.Error(), "chmod 600 "+path) {
		t.Fatalf("Open of a 0644 store: %v; want a refusal naming the fix", err)
	}
	if err := os.Chmod(path, 0o640); err != nil { // group-readable: a warning only
		t.Fatal(err)
	}
	db, err = store.Open(path, 0, discard)
	if err != nil {
		t.Fatalf("Open of a 0640 store: %v", err)
	}
	db.Close()
}
