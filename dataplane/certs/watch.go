package certs

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gantry-proxy/gantry/config"
)

// Certificate file watching: quiet period after an event, the poll that
// catches what events miss (a bind-mounted single file), and the most
// bytes read from one file to hash it.
const (
	certQuiet     = 100 * time.Millisecond
	certPoll      = 5 * time.Second
	maxCertFileSz = 1 << 20
)

// CertFiles watches the files of tls.certificates (and the default
// store's certificate) so that a change on disk reaches a new generation
// without SIGHUP: a file renamed over (editors, config management),
// rewritten in place, or a Kubernetes Secret volume swapping its "..data"
// symlink. It compares contents (SHA-256), so events that change nothing
// cost nothing. A file that no longer loads keeps its last good pair
// (Build) and is reported. Traefik needs a restart (traefik#3083,
// #5495).
//
// Watch may be called from any goroutine; Run owns its goroutine.
type CertFiles struct {
	log *slog.Logger

	mu     sync.Mutex
	hashes map[string][32]byte // path -> content hash (zero when unreadable)
	dirty  chan struct{}       // capacity 1: the set of paths changed
}

// NewCertFiles returns an idle watcher.
func NewCertFiles(log *slog.Logger) *CertFiles {
	return &CertFiles{log: log, hashes: map[string][32]byte{}, dirty: make(chan struct{}, 1)}
}

// CertPaths returns the certificate and key file paths c refers to
// (inline PEM left out), sorted and without duplicates.
func CertPaths(c *config.TLSConfiguration) []string {
	if c == nil {
		return nil
	}
	var out []string
	add := func(cert config.Certificate) {
		if isFilePair(cert) {
			out = append(out, cert.CertFile, cert.KeyFile)
		}
	}
	for _, cs := range c.Certificates {
		if cs != nil {
			add(cs.Certificate)
		}
	}
	for _, st := range c.Stores {
		if st != nil && st.DefaultCertificate != nil {
			add(*st.DefaultCertificate)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Watch replaces the watched paths with paths, taking their current
// contents as the reference.
func (w *CertFiles) Watch(paths []string) {
	next := make(map[string][32]byte, len(paths))
	w.mu.Lock()
	for _, p := range paths {
		if h, ok := w.hashes[p]; ok {
			next[p] = h
		} else {
			next[p] = hashFile(p)
		}
	}
	same := len(next) == len(w.hashes)
	for p := range next {
		if _, ok := w.hashes[p]; !ok {
			same = false
		}
	}
	w.hashes = next
	w.mu.Unlock()
	if !same {
		select {
		case w.dirty <- struct{}{}:
		default:
		}
	}
}

func hashFile(p string) [32]byte {
	f, err := os.Open(p)
	if err != nil {
		return [32]byte{}
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxCertFileSz)); err != nil {
		return [32]byte{}
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// changed re-hashes every path and reports whether any content changed.
func (w *CertFiles) changed() bool {
	w.mu.Lock()
	paths := make([]string, 0, len(w.hashes))
	for p := range w.hashes {
		paths = append(paths, p)
	}
	w.mu.Unlock()
	now := make(map[string][32]byte, len(paths))
	for _, p := range paths {
		now[p] = hashFile(p)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	diff := false
	for p, h := range now {
		if old, ok := w.hashes[p]; ok && old != h {
			w.hashes[p] = h
			diff = true
			w.log.Info("certificate file changed", "file", p)
		}
	}
	return diff
}

// dirs returns the directories to watch: each path's directory and that
// of its resolved symlink target.
func (w *CertFiles) dirs() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]bool{}
	for p := range w.hashes {
		out[filepath.Dir(p)] = true
		if r, err := filepath.EvalSymlinks(p); err == nil {
			out[filepath.Dir(r)] = true
		}
	}
	return out
}

// Run watches until ctx is done, calling onChange (from Run's goroutine)
// after a quiet period once a watched file's content changed. It returns
// nil when ctx is done; without fsnotify it still polls.
func (w *CertFiles) Run(ctx context.Context, onChange func()) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		w.log.Warn("certificate files: no file notifications; polling only", "error", err)
	}
	var events chan fsnotify.Event
	var errs chan error
	watched := map[string]bool{}
	if fw != nil {
		defer fw.Close()
		events, errs = fw.Events, fw.Errors
	}
	rewatch := func() {
		if fw == nil {
			return
		}
		want := w.dirs()
		for d := range watched {
			if !want[d] {
				_ = fw.Remove(d)
				delete(watched, d)
			}
		}
		for d := range want {
			if !watched[d] {
				if err := fw.Add(d); err == nil {
					watched[d] = true
				}
			}
		}
	}
	rewatch()
	poll := time.NewTicker(certPoll)
	defer poll.Stop()
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.dirty:
			rewatch()
		case <-events:
			quiet.Reset(certQuiet)
		case err := <-errs:
			w.log.Debug("certificate files: watch error", "error", err)
		case <-quiet.C:
			rewatch() // a symlink swap may point elsewhere now
			if w.changed() {
				onChange()
			}
		case <-poll.C:
			if w.changed() {
				onChange()
			}
		}
	}
}
