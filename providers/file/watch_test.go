package file

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitTimeout bounds every poll in these tests; events normally arrive in
// milliseconds.
const waitTimeout = 10 * time.Second

// run starts the provider with opts and returns a recorder of its
// snapshots. The provider stops when the test ends.
func run(t *testing.T, opts static.File) (*Provider, *recorder) {
	t.Helper()
	p, err := New(opts, discard)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{notify: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, r.publish) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return p, r
}

type recorder struct {
	mu     sync.Mutex
	snaps  []providers.Snapshot
	notify chan struct{}
}

func (r *recorder) publish(s providers.Snapshot) {
	r.mu.Lock()
	r.snaps = append(r.snaps, s)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.snaps)
}

func (r *recorder) all() []providers.Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.snaps)
}

// waitFor polls until the latest snapshot satisfies ok, and returns it.
func (r *recorder) waitFor(t *testing.T, what string, ok func(providers.Snapshot) bool) providers.Snapshot {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		var last *providers.Snapshot
		if n := len(r.snaps); n > 0 {
			last = &r.snaps[n-1]
		}
		r.mu.Unlock()
		if last != nil && ok(*last) {
			return *last
		}
		select {
		case <-r.notify:
		case <-deadline.C:
			got := "nothing published"
			if last != nil {
				got = fmt.Sprintf("routers %v, problems %v", routerNames(*last), problems(*last))
			}
			t.Fatalf("waiting for %s: %s", what, got)
		}
	}
}

// hasRouters reports whether a snapshot has exactly these routers, rule
// Host(`<name>.example.com`), and service backends as given by want
// (router name -> backend URL).
func serves(want map[string]string) func(providers.Snapshot) bool {
	return func(s providers.Snapshot) bool {
		if s.Config == nil {
			return false
		}
		h := s.Config.HTTP
		if h == nil || len(h.Routers) != len(want) {
			return false
		}
		for n, url := range want {
			r, ok := h.Routers[n]
			if !ok {
				return false
			}
			svc, ok := h.Services[r.Service]
			if !ok || svc.LoadBalancer == nil || len(svc.LoadBalancer.Servers) == 0 || svc.LoadBalancer.Servers[0].URL != url {
				return false
			}
		}
		return true
	}
}

// routersYAML renders a file defining one router and service per entry
// (router name -> backend URL).
func routersYAML(routes map[string]string) string {
	var b strings.Builder
	b.WriteString("http:\n  routers:\n")
	names := slices.Sorted(mapsKeys(routes))
	for _, n := range names {
		fmt.Fprintf(&b, "    %s:\n      rule: Host(`%s.example.com`)\n      service: %s\n", n, n, n)
	}
	b.WriteString("  services:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "    %s:\n      loadBalancer:\n        servers:\n          - url: %s\n", n, routes[n])
	}
	return b.String()
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// saveByRename writes content to a temporary file next to path and renames
// it over path, as vim and most IDEs save.
func saveByRename(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp~")
	write(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Case 020, directory mode: in-place write, rename-over save (and an edit
// after it), a new file created and deleted, unsupported files ignored, a
// new subdirectory picked up.
func TestWatchDirectory(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.yml")
	write(t, app, routersYAML(map[string]string{"a": "http://192.0.2.50"}))
	_, r := run(t, static.File{Directory: dir})
	r.waitFor(t, "initial a", serves(map[string]string{"a": "http://192.0.2.50"}))

	// 1. In-place write (truncate + write) adding router b.
	write(t, app, routersYAML(map[string]string{"a": "http://192.0.2.50", "b": "http://192.0.2.50"}))
	r.waitFor(t, "in-place write adds b", serves(map[string]string{"a": "http://192.0.2.50", "b": "http://192.0.2.50"}))

	// 2. Rename-over save changing b's backend; then another save the same
	// way, proving the watch survived the inode change.
	saveByRename(t, app, routersYAML(map[string]string{"a": "http://192.0.2.50", "b": "http://192.0.2.51"}))
	r.waitFor(t, "rename-over changes b", serves(map[string]string{"a": "http://192.0.2.50", "b": "http://192.0.2.51"}))
	write(t, app, routersYAML(map[string]string{"a": "http://192.0.2.52", "b": "http://192.0.2.51"}))
	r.waitFor(t, "in-place write after rename", serves(map[string]string{"a": "http://192.0.2.52", "b": "http://192.0.2.51"}))

	// 3. A second file with router c, then deleted.
	extra := filepath.Join(dir, "extra.yml")
	write(t, extra, routersYAML(map[string]string{"c": "http://192.0.2.60"}))
	r.waitFor(t, "extra.yml adds c", serves(map[string]string{"a": "http://192.0.2.52", "b": "http://192.0.2.51", "c": "http://192.0.2.60"}))
	if err := os.Remove(extra); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "deleting extra.yml removes c", serves(map[string]string{"a": "http://192.0.2.52", "b": "http://192.0.2.51"}))

	// 4. Unsupported extensions and editor swap files change nothing and
	// raise no problem.
	n := r.count()
	write(t, filepath.Join(dir, "notes.txt"), "not: [config")
	write(t, filepath.Join(dir, "app.yml.swp"), "\x00\x01binary")
	write(t, filepath.Join(dir, ".app.yml.swp"), "\x00\x01binary")
	// A subdirectory with a config file is read (recursive), which also
	// proves the events above were processed in order.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(sub, "d.yml"), routersYAML(map[string]string{"d": "http://192.0.2.61"}))
	s := r.waitFor(t, "sub/d.yml adds d", serves(map[string]string{"a": "http://192.0.2.52", "b": "http://192.0.2.51", "d": "http://192.0.2.61"}))
	for _, s := range r.all()[n:] {
		if len(s.Problems) != 0 {
			t.Errorf("ignored files raised problems: %v", problems(s))
		}
	}
	// An edit inside the subdirectory: its watch was added.
	write(t, filepath.Join(sub, "d.yml"), routersYAML(map[string]string{"d": "http://192.0.2.62"}))
	r.waitFor(t, "edit in sub", serves(map[string]string{"a": "http://192.0.2.52", "b": "http://192.0.2.51", "d": "http://192.0.2.62"}))
	_ = s
}

// Case 020 5a: filename mode with the parent directory watched, editors'
// rename-over saves, and the file deleted and created again.
func TestWatchSingleFile(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.yml")
	write(t, app, routersYAML(map[string]string{"a": "http://192.0.2.50"}))
	_, r := run(t, static.File{Filename: app})
	r.waitFor(t, "initial", serves(map[string]string{"a": "http://192.0.2.50"}))

	saveByRename(t, app, routersYAML(map[string]string{"a": "http://192.0.2.51"}))
	r.waitFor(t, "rename-over", serves(map[string]string{"a": "http://192.0.2.51"}))
	saveByRename(t, app, routersYAML(map[string]string{"a": "http://192.0.2.52", "b": "http://192.0.2.52"}))
	r.waitFor(t, "second rename-over (issue 10409: second router added)", serves(map[string]string{"a": "http://192.0.2.52", "b": "http://192.0.2.52"}))
	write(t, app, routersYAML(map[string]string{"a": "http://192.0.2.53"}))
	r.waitFor(t, "in-place", serves(map[string]string{"a": "http://192.0.2.53"}))

	// Other files in the directory are not this provider's business.
	n := r.count()
	write(t, filepath.Join(dir, "other.yml"), "broken: [")

	// Deleted: the last configuration stays, with a problem naming the file.
	if err := os.Remove(app); err != nil {
		t.Fatal(err)
	}
	s := r.waitFor(t, "deleted file reported", func(s providers.Snapshot) bool { return len(s.Problems) == 1 })
	if !serves(map[string]string{"a": "http://192.0.2.53"})(s) || s.Problems[0].Source != app {
		t.Errorf("after delete: routers %v problems %v; want a kept and a problem for %s", routerNames(s), problems(s), app)
	}
	for _, s := range r.all()[n:] {
		if !serves(map[string]string{"a": "http://192.0.2.53"})(s) {
			t.Errorf("other.yml in the same directory changed the configuration: %v", routerNames(s))
		}
	}
	write(t, app, routersYAML(map[string]string{"c": "http://192.0.2.54"}))
	r.waitFor(t, "recreated", func(s providers.Snapshot) bool {
		return serves(map[string]string{"c": "http://192.0.2.54"})(s) && len(s.Problems) == 0
	})
}

// configMap lays out a Kubernetes ConfigMap volume in dir: the data in a
// timestamped directory, "..data" pointing at it, and one top-level symlink
// per key through "..data". update swaps "..data" atomically as the
// kubelet does (new dir, "..data_tmp" symlink renamed over "..data", old dir
// removed).
type configMap struct {
	t   *testing.T
	dir string
	gen int
	cur string
}

func (c *configMap) update(files map[string]string) {
	t := c.t
	c.gen++
	ts := filepath.Join(c.dir, fmt.Sprintf("..2026_11_29_21_00_%02d.%d", c.gen, 1000+c.gen))
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		write(t, filepath.Join(ts, name), content)
	}
	tmp := filepath.Join(c.dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		link := filepath.Join(c.dir, name)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	if c.cur != "" {
		if err := os.RemoveAll(c.cur); err != nil {
			t.Fatal(err)
		}
	}
	c.cur = ts
}

func TestWatchConfigMapDirectory(t *testing.T) {
	dir := t.TempDir()
	cm := &configMap{t: t, dir: dir}
	cm.update(map[string]string{"app.yml": routersYAML(map[string]string{"a": "http://192.0.2.80"})})
	_, r := run(t, static.File{Directory: dir})
	// Read once, through the top-level symlink: no duplicate warnings.
	s := r.waitFor(t, "initial", serves(map[string]string{"a": "http://192.0.2.80"}))
	if len(s.Problems) != 0 {
		t.Errorf("problems %v", problems(s))
	}
	for i, url := range []string{"http://192.0.2.81", "http://192.0.2.82"} {
		cm.update(map[string]string{"app.yml": routersYAML(map[string]string{"a": url})})
		r.waitFor(t, fmt.Sprintf("swap %d", i+1), func(s providers.Snapshot) bool {
			return serves(map[string]string{"a": url})(s) && len(s.Problems) == 0
		})
	}
}

func TestWatchConfigMapSingleFile(t *testing.T) {
	dir := t.TempDir()
	cm := &configMap{t: t, dir: dir}
	cm.update(map[string]string{"app.yml": routersYAML(map[string]string{"a": "http://192.0.2.90"})})
	_, r := run(t, static.File{Filename: filepath.Join(dir, "app.yml")})
	r.waitFor(t, "initial", serves(map[string]string{"a": "http://192.0.2.90"}))
	for i, url := range []string{"http://192.0.2.91", "http://192.0.2.92"} {
		cm.update(map[string]string{"app.yml": routersYAML(map[string]string{"a": url})})
		r.waitFor(t, fmt.Sprintf("swap %d", i+1), serves(map[string]string{"a": url}))
	}
}

// The configured directory deleted (moved away at once: its configuration
// stays, with a problem) and created again with new content (picked up:
// the watch on the parent saw it and the new directory is watched); then
// deleted file by file (rm -rf) and recreated once more.
func TestWatchDirectoryDeletedAndRecreated(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "dynamic")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "app.yml"), routersYAML(map[string]string{"a": "http://192.0.2.100"}))
	_, r := run(t, static.File{Directory: dir})
	r.waitFor(t, "initial", serves(map[string]string{"a": "http://192.0.2.100"}))

	if err := os.Rename(dir, filepath.Join(t.TempDir(), "gone")); err != nil {
		t.Fatal(err)
	}
	s := r.waitFor(t, "deletion reported", func(s providers.Snapshot) bool { return len(s.Problems) == 1 })
	if !serves(map[string]string{"a": "http://192.0.2.100"})(s) || s.Problems[0].Source != dir {
		t.Errorf("after delete: routers %v problems %v; want a kept, problem on %s", routerNames(s), problems(s), dir)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "app.yml"), routersYAML(map[string]string{"b": "http://192.0.2.101"}))
	r.waitFor(t, "recreated", func(s providers.Snapshot) bool {
		return serves(map[string]string{"b": "http://192.0.2.101"})(s) && len(s.Problems) == 0
	})
	write(t, filepath.Join(dir, "app.yml"), routersYAML(map[string]string{"b": "http://192.0.2.102"}))
	r.waitFor(t, "edit after recreation", serves(map[string]string{"b": "http://192.0.2.102"}))

	// rm -rf removes the files first, then the directory: seen as one
	// event burst, it is the directory gone (its routes stay, issue 15),
	// not its files deleted one by one.
	for i := range 30 {
		write(t, filepath.Join(dir, fmt.Sprintf("more%02d.yml", i)), routersYAML(map[string]string{fmt.Sprintf("m%02d", i): "http://192.0.2.104"}))
	}
	r.waitFor(t, "more files", func(s providers.Snapshot) bool { return len(s.Config.HTTP.Routers) == 31 })
	before := r.count()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "rm -rf", func(s providers.Snapshot) bool { return len(s.Problems) == 1 })
	for _, s := range r.all()[before:] {
		if n := len(s.Config.HTTP.Routers); n != 31 {
			t.Errorf("during rm -rf: published %d routers, problems %v; want all 31 kept", n, problems(s))
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "app.yml"), routersYAML(map[string]string{"c": "http://192.0.2.103"}))
	r.waitFor(t, "recreated after rm -rf", func(s providers.Snapshot) bool {
		return serves(map[string]string{"c": "http://192.0.2.103"})(s) && len(s.Problems) == 0
	})
}

// A missing directory at start publishes only its problem, asking the
// aggregator to keep what it has (the configuration restored from the
// store, issue 4's restart test), even on Reload, so /api/problems says why
// (issue 15); its later creation is picked up.
func TestMissingAtStart(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "later")
	p, r := run(t, static.File{Directory: dir})
	r.waitFor(t, "missing reported", func(s providers.Snapshot) bool { return s.KeepConfig })
	p.Reload()
	staged := filepath.Join(parent, "staged")
	if err := os.Mkdir(staged, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(staged, "app.yml"), routersYAML(map[string]string{"a": "http://192.0.2.110"}))
	if err := os.Rename(staged, dir); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "created", serves(map[string]string{"a": "http://192.0.2.110"}))
	for _, s := range r.all() {
		if s.KeepConfig {
			if len(s.Problems) != 1 || s.Problems[0].Source != dir || !strings.HasPrefix(s.Problems[0].Message, "does not exist;") {
				t.Errorf("while missing: problems %v; want one on %s saying it does not exist", problems(s), dir)
			}
			continue
		}
		if len(s.Config.HTTP.Routers) == 0 {
			t.Errorf("published an empty snapshot while the directory was missing")
		}
	}
}

// Case 022 with real files: a non-atomic save observed half-written is not
// applied; b's last good content stays until the save completes; a file
// broken at start is loaded once fixed (issue 6020).
func TestWatchHalfWrittenFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yml"), filepath.Join(dir, "b.yml")
	aData, _ := os.ReadFile("testdata/case022/a.yml")
	bData, _ := os.ReadFile("testdata/case022/b.yml")
	write(t, a, string(aData))
	write(t, b, string(bData))
	_, r := run(t, static.File{Directory: dir})
	both := func(bURL string) func(providers.Snapshot) bool {
		return serves(map[string]string{"a": "http://192.0.2.70", "b": bURL})
	}
	r.waitFor(t, "initial", func(s providers.Snapshot) bool { return both("http://192.0.2.71")(s) && len(s.Problems) == 0 })

	next := strings.Replace(string(bData), "192.0.2.71", "192.0.2.72", 1)
	f, err := os.OpenFile(b, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(next[:100]); err != nil { // ends inside "[hsts@file]"
		t.Fatal(err)
	}
	s := r.waitFor(t, "half-written b.yml seen", func(s providers.Snapshot) bool {
		return len(s.Problems) == 1 && strings.HasPrefix(s.Problems[0].Source, b+":")
	})
	if !both("http://192.0.2.71")(s) {
		t.Errorf("half-written: routers %v problems %v; want b's last good content and a problem on b.yml", routerNames(s), problems(s))
	}
	if _, err := f.WriteString(next[100:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r.waitFor(t, "completed save", func(s providers.Snapshot) bool { return both("http://192.0.2.72")(s) && len(s.Problems) == 0 })
	for _, s := range r.all() {
		if rb := s.Config.HTTP.Routers["b"]; rb == nil || len(rb.Middlewares) != 1 {
			t.Errorf("a partial b.yml was published: routers %v, b = %+v", routerNames(s), rb)
		}
	}
}

func TestBrokenAtStartRecoversOnFix(t *testing.T) {
	dir := t.TempDir()
	b := filepath.Join(dir, "b.yml")
	write(t, b, "http:\n  routers:\n    b: [\n")
	_, r := run(t, static.File{Directory: dir})
	r.waitFor(t, "broken reported", func(s providers.Snapshot) bool { return len(s.Problems) == 1 && len(s.Config.HTTP.Routers) == 0 })
	write(t, b, routersYAML(map[string]string{"b": "http://192.0.2.71"}))
	r.waitFor(t, "fixed", func(s providers.Snapshot) bool {
		return serves(map[string]string{"b": "http://192.0.2.71"})(s) && len(s.Problems) == 0
	})
}

// With watch off, only Reload (SIGHUP) re-reads.
func TestReload(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.yml")
	write(t, app, routersYAML(map[string]string{"a": "http://192.0.2.120"}))
	off := false
	p, r := run(t, static.File{Filename: app, Watch: &off})
	r.waitFor(t, "initial", serves(map[string]string{"a": "http://192.0.2.120"}))
	write(t, app, routersYAML(map[string]string{"a": "http://192.0.2.121"}))
	p.Reload()
	r.waitFor(t, "reloaded", serves(map[string]string{"a": "http://192.0.2.121"}))
	if n := r.count(); n != 2 {
		t.Errorf("got %d publishes, want 2 (no watching)", n)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []static.File{{}, {Filename: "a.yml", Directory: "d"}, {Filename: "a.txt"}} {
		if _, err := New(o, discard); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

// Case 021 / issue 15: in directory mode a dangling symbolic link and a
// symbolic link loop are each a problem naming the file; the other files
// apply.
func TestDanglingAndLoopingSymlinks(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yml"), routersYAML(map[string]string{"a": "http://192.0.2.130"}))
	dangling, loop := filepath.Join(dir, "gone.yml"), filepath.Join(dir, "loop.yml")
	if err := os.Symlink(filepath.Join(dir, "nowhere.yml"), dangling); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	_, r := run(t, static.File{Directory: dir})
	s := r.waitFor(t, "initial", serves(map[string]string{"a": "http://192.0.2.130"}))
	got := map[string]string{}
	for _, p := range s.Problems {
		got[p.Source] = p.Message
	}
	if m := got[dangling]; !strings.Contains(m, "symbolic link to a missing file") {
		t.Errorf("dangling link: %q; problems %v", m, problems(s))
	}
	if m := got[loop]; !strings.Contains(m, "symbolic link cannot be followed") || !strings.Contains(m, "too many levels") {
		t.Errorf("link loop: %q; problems %v", m, problems(s))
	}
}

// Issue 15: a permission change (chmod) is noticed without SIGHUP: it
// causes a re-read.
func TestChmodCausesReread(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.yml")
	write(t, app, routersYAML(map[string]string{"a": "http://192.0.2.140"}))
	_, r := run(t, static.File{Directory: dir})
	r.waitFor(t, "initial", serves(map[string]string{"a": "http://192.0.2.140"}))
	n := r.count()
	if err := os.Chmod(app, 0o600); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "re-read after chmod", func(providers.Snapshot) bool { return r.count() > n })
}

// Issue 15: an unreadable path is not reported as missing.
func TestUnreadableIsNotMissing(t *testing.T) {
	p, err := New(static.File{Directory: "/etc/gantry-test"}, discard)
	if err != nil {
		t.Fatal(err)
	}
	for err, want := range map[error]string{
		&fs.PathError{Op: "open", Path: p.root, Err: syscall.EACCES}: "cannot be read: permission denied",
		&fs.PathError{Op: "stat", Path: p.root, Err: syscall.ENOENT}: "does not exist",
		&fs.PathError{Op: "stat", Path: p.root, Err: syscall.EIO}:    "cannot be read: stat /etc/gantry-test: input/output error",
	} {
		if m := p.unreadable(err).Message; !strings.HasPrefix(m, want) {
			t.Errorf("%v: %q, want prefix %q", err, m, want)
		}
	}
}
