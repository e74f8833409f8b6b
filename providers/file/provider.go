package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// Provider is the file provider. Create it with New; Run it once (the
// aggregator does). Reload may be called from any goroutine.
type Provider struct {
	log    *slog.Logger
	root   string // absolute filename or directory
	isDir  bool
	watch  bool
	debug  bool
	limits limits
	reload chan struct{}
}

// settleQuiet and settleMax bound how long Run waits for a burst of file
// system events to end before reading: an "rm -rf" of the directory is seen
// as the directory gone (its last good configuration stays), not as its
// files deleted one by one (routes dropped).
//
// A burst with a removal waits longer (settleQuietRemove): deletions are
// rare, and an rm -rf slowed down by a busy machine must still end before
// the directory is read.
const (
	settleQuiet       = 25 * time.Millisecond
	settleQuietRemove = 150 * time.Millisecond
	settleMax         = time.Second
)

// New returns a file provider for opts (providers.file in the static
// configuration). Exactly one of opts.Filename and opts.Directory must be
// set; relative paths are made absolute against the working directory.
// The path need not exist yet.
func New(opts static.File, log *slog.Logger) (*Provider, error) {
	p := &Provider{
		log:    log.With("provider", name),
		watch:  opts.Watch == nil || *opts.Watch,
		debug:  opts.DebugLogGeneratedTemplate,
		limits: limitsOf(opts),
		reload: make(chan struct{}, 1),
	}
	switch {
	case opts.Filename != "" && opts.Directory != "":
		return nil, errors.New("providers.file: filename and directory are mutually exclusive; set one")
	case opts.Filename != "":
		if _, ok := config.FormatOf(opts.Filename); !ok {
			return nil, fmt.Errorf("providers.file: filename %s: unsupported extension; want .yml, .yaml, .toml or .json", opts.Filename)
		}
		p.root = opts.Filename
	case opts.Directory != "":
		p.root, p.isDir = opts.Directory, true
	default:
		return nil, errors.New("providers.file: set filename or directory")
	}
	abs, err := filepath.Abs(p.root)
	if err != nil {
		return nil, fmt.Errorf("providers.file: %w", err)
	}
	p.root = abs
	return p, nil
}

// Name returns "file".
func (p *Provider) Name() string { return name }

// Reload makes Run re-read every file now, as SIGHUP does for Traefik. It
// never blocks; reloads requested while one is pending coalesce.
func (p *Provider) Reload() {
	select {
	case p.reload <- struct{}{}:
	default:
	}
}

// Run reads the configured path, publishes a Snapshot, and with watch on
// (the default) publishes again on every relevant file system event or
// Reload, until ctx is done (it then returns nil). It returns an error only
// when the file system watcher cannot be created.
func (p *Provider) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	b := newBuilder(p.log, p.debug)
	b.limits = p.limits
	var w *fsnotify.Watcher
	if p.watch {
		var err error
		if w, err = fsnotify.NewWatcher(); err != nil {
			return fmt.Errorf("providers.file: watch %s: %w", p.root, err)
		}
		defer w.Close()
	}
	var last *providers.Snapshot
	load := func() {
		files, dirs, missing := p.read()
		// A directory watched only now may have gained files between the
		// read and the watch: read again until no new watch was needed, so
		// a file written right after startup (or into a new sub-directory)
		// is never missed.
		for i := 0; w != nil && p.syncWatches(w, dirs) && i < 3; i++ {
			files, dirs, missing = p.read()
		}
		if missing != nil {
			if last == nil {
				// At startup: the configuration restored from the store
				// (if any) stays, and /api/problems says why.
				p.log.Warn("cannot read the configuration path; keeping the stored configuration", "path", p.root, "problem", missing.Message)
				publish(providers.Snapshot{KeepConfig: true, Problems: []providers.Problem{*missing}})
				return
			}
			s := providers.Snapshot{Config: last.Config, Origins: last.Origins, Problems: append([]providers.Problem{*missing}, last.Problems...)}
			publish(s)
			return
		}
		s := b.build(ctx, files)
		last = &s
		publish(s)
	}
	load()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.reload:
			p.log.Info("reloading on request", "path", p.root)
		case ev := <-events:
			if !p.relevant(ev) {
				continue
			}
			if !p.settle(ctx, w, ev.Op.Has(fsnotify.Remove)) {
				return nil
			}
		case err := <-errs:
			// An overflowed event queue loses events: re-read everything.
			p.log.Warn("file watcher error; re-reading", "error", err)
		}
		load()
	}
}

// settle consumes events until none has arrived for settleQuiet
// (settleQuietRemove once a removal was seen; at most settleMax), so that a burst (an editor's save, a ConfigMap swap, rm -rf)
// costs one re-read and is read once it is over. It returns false when ctx
// is done.
func (p *Provider) settle(ctx context.Context, w *fsnotify.Watcher, removal bool) bool {
	window := func() time.Duration {
		if removal {
			return settleQuietRemove
		}
		return settleQuiet
	}
	return providers.Settle(ctx, w.Events, window(), settleMax, func(ev fsnotify.Event) time.Duration {
		removal = removal || ev.Op.Has(fsnotify.Remove)
		return window()
	})
}

// relevant reports whether ev may change the configuration.
func (p *Provider) relevant(ev fsnotify.Event) bool {
	// Chmod counts: a file or directory made unreadable, or readable
	// again, is noticed without SIGHUP.
	if p.isDir {
		return ev.Name == p.root || strings.HasPrefix(ev.Name, p.root+string(filepath.Separator))
	}
	if filepath.Dir(ev.Name) != filepath.Dir(p.root) {
		return false
	}
	base := filepath.Base(ev.Name)
	// "..data" and "..<timestamp>": a Kubernetes ConfigMap volume swapping
	// the symlink the file points through.
	return base == filepath.Base(p.root) || strings.HasPrefix(base, "..")
}

// syncWatches watches the parent of the root (to see the root deleted and
// recreated, or a single file replaced) and every directory of the tree. It
// reports whether it added a watch.
func (p *Provider) syncWatches(w *fsnotify.Watcher, dirs []string) (added bool) {
	want := append([]string{filepath.Dir(p.root)}, dirs...)
	have := w.WatchList()
	for _, d := range want {
		if slices.Contains(have, d) {
			continue
		}
		if err := w.Add(d); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				p.log.Warn("cannot watch directory", "path", d, "error", err)
			}
			continue
		}
		added = true
	}
	for _, d := range have {
		if !slices.Contains(want, d) {
			_ = w.Remove(d) // already gone with its directory, usually
		}
	}
	return added
}

// read returns the configuration files in name order, the directories to
// watch, and a Problem when the configured path does not exist.
func (p *Provider) read() (files []input, dirs []string, missing *providers.Problem) {
	st, err := os.Stat(p.root)
	if err != nil {
		return nil, nil, p.unreadable(err)
	}
	if !p.isDir {
		return []input{readFile(p.root, p.limits.fileSize)}, nil, nil
	}
	if !st.IsDir() {
		return nil, nil, &providers.Problem{
			Provider: name, Source: p.root, Severity: providers.SeverityError,
			Message: "not a directory; keeping the last configuration read from it",
		}
	}
	// Walk the resolved tree (the root itself may be a symlink) but report
	// paths under the configured root.
	real, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		real = p.root
	}
	var rootErr error
	_ = filepath.WalkDir(real, func(path string, d fs.DirEntry, err error) error {
		shown := p.root + strings.TrimPrefix(path, real)
		if err != nil && path == real {
			rootErr = err // removed between Stat and the walk (rm -rf racing us)
			return filepath.SkipAll
		}
		if err != nil {
			files = append(files, input{path: shown, err: err})
			return nil
		}
		if path != real && strings.HasPrefix(d.Name(), ".") {
			// Hidden entries: editors' swap files, and Kubernetes' "..data"
			// and "..<timestamp>" (their files are reached through the
			// top-level symlinks, read once).
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			dirs = append(dirs, shown)
			return nil
		}
		if _, ok := config.FormatOf(d.Name()); !ok {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// A dangling link (a ConfigMap key removed, or mid-swap) or a
			// loop is a problem naming the file, not a silent skip (case
			// 021); its last good content stays meanwhile.
			st, err := os.Stat(path)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				files = append(files, input{path: shown, err: fmt.Errorf("symbolic link to a missing file (%s)", linkTarget(path))})
				return nil
			case err != nil:
				files = append(files, input{path: shown, err: fmt.Errorf("symbolic link cannot be followed: %w", err)})
				return nil
			case !st.Mode().IsRegular():
				return nil // a link to a directory: not followed, as by Traefik
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		files = append(files, readFile(path, p.limits.fileSize))
		files[len(files)-1].path = shown
		return nil
	})
	if rootErr != nil {
		return nil, nil, p.unreadable(rootErr)
	}
	return files, dirs, nil
}

// unreadable is the Problem for a configured path that cannot be read,
// saying which of "does not exist" and "permission denied" it is.
func (p *Provider) unreadable(err error) *providers.Problem {
	var why string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "does not exist"
	case errors.Is(err, fs.ErrPermission):
		why = "cannot be read: permission denied (check its owner and mode, and those of its parent directories)"
	default:
		why = fmt.Sprintf("cannot be read: %v", err)
	}
	return &providers.Problem{
		Provider: name, Source: p.root, Severity: providers.SeverityError,
		Message: why + "; keeping the last configuration read from it (at startup: the one kept in the store, if any)",
	}
}

// linkTarget returns what the symbolic link path points to, for messages.
func linkTarget(path string) string {
	t, err := os.Readlink(path)
	if err != nil {
		return "?"
	}
	return t
}

// readFile reads path, failing without reading it all when it is larger
// than max bytes.
func readFile(path string, max int64) input {
	f, err := os.Open(path)
	if err != nil {
		return input{path: path, err: err}
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > max {
		return input{path: path, err: fmt.Errorf("file is %d bytes, over providers.file.maxFileSize (%d)", st.Size(), max)}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("file is over providers.file.maxFileSize (%d bytes)", max)
	}
	return input{path: path, data: data, err: err}
}
