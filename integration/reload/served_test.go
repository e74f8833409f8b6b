package reload

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/instance"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/file"
)

// pollTimeout bounds each wait for a change to be served.
const pollTimeout = 60 * time.Second

// stack is the in-process reload path with real parts: the file provider
// on real files, and the instance gantry runs (instance.Instance: the
// aggregator, router.Compile with the dataplane Generation, the swap and
// the retirement of the old generation), serving entrypoint "web" on a
// real listener to real backends.
type stack struct {
	front    string                      // "http://<web's address>"
	backends map[string]*httptest.Server // name -> backend answering "backend <name>"
	applied  atomic.Int64                // configurations applied
}

func newStack(t *testing.T, opts static.File, backendNames ...string) *stack {
	return newStackWith(t, opts, nil, backendNames...)
}

// newStackWith is newStack with more providers next to the file provider.
func newStackWith(t *testing.T, opts static.File, more []providers.Provider, backendNames ...string) *stack {
	t.Helper()
	s := &stack{backends: map[string]*httptest.Server{}}
	for _, n := range backendNames {
		s.backends[n] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "backend %s", n)
		}))
		t.Cleanup(s.backends[n].Close)
	}
	log := slog.New(slog.DiscardHandler)
	fp, err := file.New(opts, log)
	if err != nil {
		t.Fatal(err)
	}
	debounce := config.Duration(10 * time.Millisecond)
	c := &static.Configuration{
		EntryPoints: map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}},
		Providers:   &static.Providers{ProvidersThrottleDuration: &debounce},
	}
	inst := instance.New(c, instance.Options{Log: log})
	t.Cleanup(func() {
		if err := inst.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if err := inst.Start(context.Background(), instance.Wiring{
		Providers: append([]providers.Provider{fp}, more...),
		Listeners: []instance.Listener{instance.ListenerFunc(func(context.Context, *providers.Merged, time.Time) { s.applied.Add(1) })},
	}); err != nil {
		t.Fatal(err)
	}
	s.front = "http://" + inst.Addrs("web")[0].String()
	return s
}

// url returns a backend's URL for use in a configuration file.
func (s *stack) url(name string) string { return s.backends[name].URL }

// get sends GET / with Host host through the front end.
func (s *stack) get(host string) (int, string, error) {
	code, body, _, err := s.getH(host)
	return code, body, err
}

// getH is get returning the response headers too.
func (s *stack) getH(host string) (int, string, http.Header, error) {
	req, _ := http.NewRequest(http.MethodGet, s.front+"/", nil)
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header, err
}

// expect polls until host is served by backend (or, with backend "404",
// answers 404).
func (s *stack) expect(t *testing.T, step, host, backend string) {
	t.Helper()
	deadline := time.Now().Add(pollTimeout)
	var last string
	for {
		code, body, err := s.get(host)
		switch {
		case err != nil:
			last = err.Error()
		case backend == "404" && code == http.StatusNotFound:
			return
		case backend != "404" && code == http.StatusOK && body == "backend "+backend:
			return
		default:
			last = fmt.Sprintf("%d %q", code, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s: got %s, want backend %s", step, host, last, backend)
		}
		time.Sleep(5 * time.Millisecond) // poll interval
	}
}

// conf renders a dynamic file: router name -> backend URL, each router
// with rule Host(`<name>.test`).
func conf(routes ...string) string {
	var b strings.Builder
	b.WriteString("http:\n  routers:\n")
	for i := 0; i+1 < len(routes); i += 2 {
		fmt.Fprintf(&b, "    %s:\n      rule: Host(`%s.test`)\n      service: %s\n", routes[i], routes[i], routes[i])
	}
	b.WriteString("  services:\n")
	for i := 0; i+1 < len(routes); i += 2 {
		fmt.Fprintf(&b, "    %s:\n      loadBalancer:\n        servers:\n          - url: %s\n", routes[i], routes[i+1])
	}
	return b.String()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func renameOver(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".save-tmp")
	writeFile(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Cases 020 and 022 end to end: each file change is checked on the routes
// actually served.
func TestServedDirectoryChanges(t *testing.T) {
	dir := t.TempDir()
	app, extra, b := filepath.Join(dir, "app.yml"), filepath.Join(dir, "extra.yml"), filepath.Join(dir, "b.yml")
	s := newStack(t, static.File{Directory: dir}, "one", "two", "three")
	writeFile(t, app, conf("a", s.url("one")))
	s.expect(t, "initial", "a.test", "one")

	writeFile(t, app, conf("a", s.url("one"), "b", s.url("one")))
	s.expect(t, "020.1 in-place write adds b", "b.test", "one")

	renameOver(t, app, conf("a", s.url("one"), "b", s.url("two")))
	s.expect(t, "020.2 rename-over changes b's backend", "b.test", "two")
	writeFile(t, app, conf("a", s.url("three"), "b", s.url("two")))
	s.expect(t, "020.2 later in-place edit still seen", "a.test", "three")

	writeFile(t, extra, conf("c", s.url("one")))
	s.expect(t, "020.3 new file adds c", "c.test", "one")
	if err := os.Remove(extra); err != nil {
		t.Fatal(err)
	}
	s.expect(t, "020.3 deleted file removes c", "c.test", "404")

	writeFile(t, filepath.Join(dir, "notes.txt"), "whatever: [")
	writeFile(t, b, conf("d", s.url("one")))
	s.expect(t, "020.4 unsupported files ignored", "d.test", "one")

	// 022: b.yml broken (a syntax error): d keeps being served from b.yml's
	// last good content while a change elsewhere applies.
	writeFile(t, b, strings.Replace(conf("d", s.url("two")), "      service: d\n", "      service: [d\n", 1))
	writeFile(t, app, conf("a", s.url("two"), "b", s.url("two")))
	s.expect(t, "022 other file's change applies", "a.test", "two")
	s.expect(t, "022 broken b.yml keeps its last good content", "d.test", "one")
	writeFile(t, b, conf("d", s.url("two")))
	s.expect(t, "022 fixed b.yml applies", "d.test", "two")
}

func TestServedConfigMapAndRecreatedDirectory(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "dynamic")
	s := newStack(t, static.File{Directory: dir}, "one", "two", "three")

	// Kubernetes ConfigMap layout, created in one step as the kubelet does.
	mkConfigMap := func(gen int, content string) {
		ts := filepath.Join(dir, fmt.Sprintf("..2026_%d", gen))
		if err := os.MkdirAll(ts, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(ts, "app.yml"), content)
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "app.yml")); err != nil {
			if err := os.Symlink("..data/app.yml", filepath.Join(dir, "app.yml")); err != nil {
				t.Fatal(err)
			}
		}
		if gen > 1 {
			if err := os.RemoveAll(filepath.Join(dir, fmt.Sprintf("..2026_%d", gen-1))); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The directory does not exist at start: created later, it is picked up.
	mkConfigMap(1, conf("a", s.url("one")))
	s.expect(t, "directory created after start", "a.test", "one")
	mkConfigMap(2, conf("a", s.url("two")))
	s.expect(t, "ConfigMap ..data swap", "a.test", "two")

	// Deleted (moved away): the last configuration keeps serving.
	if err := os.Rename(dir, filepath.Join(parent, "old")); err != nil {
		t.Fatal(err)
	}
	before := s.applied.Load()
	s.expect(t, "directory deleted: still served", "a.test", "two")
	// Recreated with new content.
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "app.yml"), conf("a", s.url("three")))
	s.expect(t, "directory recreated", "a.test", "three")
	after := s.applied.Load()
	if after <= before {
		t.Errorf("no apply after recreation (%d, %d)", before, after)
	}
}

func TestServedSingleFile(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app.yml")
	writeFile(t, app, conf("a", "http://127.0.0.1:1"))
	s := newStack(t, static.File{Filename: app}, "one", "two")
	writeFile(t, app, conf("a", s.url("one")))
	s.expect(t, "in-place", "a.test", "one")
	renameOver(t, app, conf("a", s.url("two")))
	s.expect(t, "rename-over", "a.test", "two")
	renameOver(t, app, conf("a", s.url("two"), "b", s.url("one")))
	s.expect(t, "second rename-over adds b (issue 10409)", "b.test", "one")
}
