package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// watchCounter runs a staticWatcher on path and counts notifications.
type watchCounter struct {
	mu sync.Mutex
	n  int
	ch chan struct{}
}

func startWatch(t *testing.T, path string) *watchCounter {
	t.Helper()
	w, err := newStaticWatcher(path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	c := &watchCounter{ch: make(chan struct{}, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.run(ctx, func() {
			c.mu.Lock()
			c.n++
			c.mu.Unlock()
			c.ch <- struct{}{}
		}); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	time.Sleep(50 * time.Millisecond) // the watch is set up
	return c
}

// want waits for one notification, failing after a few seconds.
func (c *watchCounter) want(t *testing.T, what string) {
	t.Helper()
	select {
	case <-c.ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no notification", what)
	}
}

// none checks that no notification comes within a settle window and a bit.
func (c *watchCounter) none(t *testing.T, what string) {
	t.Helper()
	select {
	case <-c.ch:
		t.Fatalf("%s: notified, want no notification", what)
	case <-time.After(staticSettleQuiet + 300*time.Millisecond):
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The static file changed in place, renamed over (editors, config
// management) and deleted then recreated is noticed once per change; a
// touch or chmod that leaves the content alone, and a sibling file, are
// not.
func TestStaticWatcherFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gantry.yml")
	write(t, path, "a: 1\n")
	c := startWatch(t, path)

	write(t, path, "a: 2\n")
	c.want(t, "write in place")
	tmp := filepath.Join(dir, ".gantry.yml.swp")
	write(t, tmp, "a: 3\n")
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	c.want(t, "rename over")
	now := time.Now()
	if err := os.Chtimes(path, now, now); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	c.none(t, "touch and chmod")
	write(t, filepath.Join(dir, "other.yml"), "b: 1\n")
	c.none(t, "a sibling file")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	c.want(t, "removed (the reload reports it unreadable)")
	write(t, path, "a: 4\n")
	c.want(t, "recreated")
}

// A Kubernetes ConfigMap volume: gantry.yml -> ..data/gantry.yml, ..data ->
// ..<timestamp>; an update writes a new timestamped directory and renames
// a new ..data link over the old one.
func TestStaticWatcherConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	mk := func(stamp, content string) {
		d := filepath.Join(dir, stamp)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(d, "gantry.yml"), content)
	}
	swap := func(stamp string) {
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(stamp, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	mk("..2026_01", "a: 1\n")
	if err := os.Symlink("..2026_01", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "gantry.yml")
	if err := os.Symlink(filepath.Join("..data", "gantry.yml"), path); err != nil {
		t.Fatal(err)
	}
	c := startWatch(t, path)

	mk("..2026_02", "a: 2\n")
	swap("..2026_02")
	if err := os.RemoveAll(filepath.Join(dir, "..2026_01")); err != nil {
		t.Fatal(err)
	}
	c.want(t, "ConfigMap update")
	// The same content in a new timestamped directory: no reload.
	mk("..2026_03", "a: 2\n")
	swap("..2026_03")
	c.none(t, "ConfigMap re-sync with the same content")
}

// A file that is a symbolic link to another directory: an edit of the
// target is noticed.
func TestStaticWatcherLinkTarget(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	target := filepath.Join(other, "real.yml")
	write(t, target, "a: 1\n")
	path := filepath.Join(dir, "gantry.yml")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	c := startWatch(t, path)
	tmp := filepath.Join(other, "real.yml.new")
	write(t, tmp, "a: 2\n")
	if err := os.Rename(tmp, target); err != nil {
		t.Fatal(err)
	}
	c.want(t, "the link's target renamed over")
}
