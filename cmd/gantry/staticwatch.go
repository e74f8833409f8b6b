package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gantry-proxy/gantry/providers"
)

// staticSettle bounds the wait for a burst of events on the static
// configuration file to end (an editor's write-rename-chmod, a ConfigMap's
// symlink swap) before it is read: staticSettleQuiet without a new event,
// at most staticSettleMax.
const (
	staticSettleQuiet = 100 * time.Millisecond
	staticSettleMax   = time.Second
)

// staticWatcher watches the static configuration file the way the file
// provider watches its files (providers/file): the parent directory, so a
// file written in place, renamed over (editors, config management),
// deleted and recreated, or swapped through a symbolic link (a Kubernetes
// ConfigMap volume: gantry.yml -> ..data/gantry.yml, "..data" renamed over)
// is seen; when the file is a link, the directory of its target too.
type staticWatcher struct {
	path string // as given (absolute)
	log  *slog.Logger
	last [sha256.Size]byte // content hash at the last notification (or start)
	have bool
}

// newStaticWatcher returns a watcher of path; the current content counts
// as seen (a notification means it changed since).
func newStaticWatcher(path string, log *slog.Logger) (*staticWatcher, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	w := &staticWatcher{path: abs, log: log}
	w.last, w.have = w.hash()
	return w, nil
}

// hash returns the content hash of the file, false when it cannot be read.
func (w *staticWatcher) hash() ([sha256.Size]byte, bool) {
	b, err := os.ReadFile(w.path)
	if err != nil {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(b), true
}

// dirs returns the directories to watch: the file's, and its link target's.
func (w *staticWatcher) dirs() []string {
	out := []string{filepath.Dir(w.path)}
	if t, err := filepath.EvalSymlinks(w.path); err == nil {
		if d := filepath.Dir(t); d != out[0] {
			out = append(out, d)
		}
	}
	return out
}

// relevant reports whether ev may have changed the file: an event on its
// name or its link target's, or on a ".."-prefixed entry next to it (the
// ConfigMap's timestamped directory and "..data" link).
func (w *staticWatcher) relevant(ev fsnotify.Event) bool {
	names := []string{w.path}
	if t, err := filepath.EvalSymlinks(w.path); err == nil {
		names = append(names, t)
	}
	for _, n := range names {
		if ev.Name == n {
			return true
		}
		if filepath.Dir(ev.Name) == filepath.Dir(n) && strings.HasPrefix(filepath.Base(ev.Name), "..") {
			return true
		}
	}
	return false
}

// run calls changed after each settled burst of relevant events that left
// the file with a content other than the one last seen (or unreadable, so
// the reload reports why), until ctx is done. It returns an error only
// when the watcher cannot be created.
func (w *staticWatcher) run(ctx context.Context, changed func()) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.path, err)
	}
	defer fw.Close()
	w.sync(fw)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-fw.Events:
			if !w.relevant(ev) {
				continue
			}
			if !w.settle(ctx, fw) {
				return nil
			}
		case err := <-fw.Errors:
			w.log.Warn("static configuration watcher error; re-reading", "path", w.path, "error", err)
		}
		w.sync(fw) // a swapped link may point elsewhere now
		sum, ok := w.hash()
		if ok && w.have && bytes.Equal(sum[:], w.last[:]) {
			continue // touched, not changed
		}
		if !ok && !w.have {
			continue // still unreadable: already reported
		}
		w.last, w.have = sum, ok
		changed()
	}
}

// settle consumes events until none has come for staticSettleQuiet (at
// most staticSettleMax). It returns false when ctx is done.
func (w *staticWatcher) settle(ctx context.Context, fw *fsnotify.Watcher) bool {
	return providers.Settle(ctx, fw.Events, staticSettleQuiet, staticSettleMax, nil)
}

// sync makes fw watch exactly w.dirs().
func (w *staticWatcher) sync(fw *fsnotify.Watcher) {
	want := w.dirs()
	for _, d := range want {
		if slices.Contains(fw.WatchList(), d) {
			continue
		}
		if err := fw.Add(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			w.log.Warn("cannot watch the static configuration's directory; SIGHUP still reloads", "path", d, "error", err)
		}
	}
	for _, d := range fw.WatchList() {
		if !slices.Contains(want, d) {
			_ = fw.Remove(d)
		}
	}
}
