package store

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
)

// Put then Get returns the value, also after reopening the file; a key
// never written is nil without error.
func TestKVPutGet(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	db, err := Open(path, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := db.Get(ctx, "acme", "le"); v != nil || err != nil {
		t.Fatalf("Get before Put: got %q, %v; want nil, nil", v, err)
	}
	if err := db.Put(ctx, "acme", "le", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(path, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Get(ctx, "acme", "le"); string(v) != `{"a":1}` || err != nil {
		t.Fatalf("Get after reopen: got %q, %v", v, err)
	}
	if v, _ := db.Get(ctx, "acme", "other"); v != nil {
		t.Fatalf("other key: got %q, want nil", v)
	}
}

// Update sees the current value and replaces it.
func TestKVUpdate(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "g.db"), 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < 3; i++ {
		if err := db.Update(ctx, "acme", "n", func(old []byte) ([]byte, error) { return append(old, 'x'), nil }); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := db.Get(ctx, "acme", "n"); string(v) != "xxx" {
		t.Fatalf("got %q, want xxx", v)
	}
}
