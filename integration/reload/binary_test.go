package reload

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// staticConfig is gantry's static configuration for these tests: one
// entrypoint, the file provider on a directory, the store in the working
// directory.
func staticConfig(web, dyn, db, throttle string) string {
	return fmt.Sprintf(`entryPoints:
  web:
    address: %q
providers:
  providersThrottleDuration: %s
  file:
    directory: %q
store:
  path: %q
log:
  level: INFO
`, web, throttle, dyn, db)
}

// whoamiConf routes Host(`<name>.test`) to the whoami backend at url, for
// each name.
func whoamiConf(url string, names ...string) string {
	var routes []string
	for _, n := range names {
		routes = append(routes, n, url)
	}
	return conf(routes...)
}

// Issue 4's restart test: apply a configuration, stop gantry, restart it
// with the file provider's directory missing: the routes are still served,
// from the store; creating the directory later applies its content.
func TestRestartServesFromStore(t *testing.T) {
	w1 := harness.StartWhoamiProc(t, "w1")
	w2 := harness.StartWhoamiProc(t, "w2")
	work := t.TempDir()
	dyn := filepath.Join(work, "dynamic")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w1.URL(), "a", "b"))
	// With the API on its own entrypoint, to see where routes come from.
	static := strings.Replace(staticConfig(harness.FreeAddr(t), dyn, filepath.Join(work, "gantry.db"), "20ms"),
		"entryPoints:\n", fmt.Sprintf("api:\n  insecure: true\nentryPoints:\n  traefik:\n    address: %q\n", harness.FreeAddr(t)), 1)

	g := harness.StartWith(t, harness.Options{Static: static, Dir: work})
	harness.TryGet(t, pollTimeout, g.URL(t, "web", "/"), harness.Host("a.test"), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	// "config applied" is logged after the configuration was saved.
	harness.Try(t, pollTimeout, func() error {
		if !strings.Contains(g.Output(), "config applied") {
			return fmt.Errorf("no config applied log line yet")
		}
		return nil
	})
	if code := g.Stop(t); code != 0 {
		t.Fatalf("gantry exit code %d after SIGTERM", code)
	}
	if err := os.RemoveAll(dyn); err != nil {
		t.Fatal(err)
	}

	g2 := harness.StartWith(t, harness.Options{Static: static, Dir: work})
	for _, host := range []string{"a.test", "b.test"} {
		r, err := harness.Get(g2.URL(t, "web", "/"), harness.Host(host))
		if err != nil || r.StatusCode != 200 || !strings.Contains(r.Body, "Name: w1") {
			t.Fatalf("after restart with the directory missing, %s: %v %+v; want 200 from w1 at once (served from the store)", host, err, r)
		}
	}
	if out := g2.Output(); !strings.Contains(out, "restored the last good configuration") {
		t.Errorf("restart log lacks the restore line:\n%s", out)
	}
	// The API says the file provider's part is served from the store.
	var provs []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	r, err := harness.Get(g2.URL(t, "traefik", "/api/providers"))
	if err != nil || r.StatusCode != 200 || json.Unmarshal([]byte(r.Body), &provs) != nil {
		t.Fatalf("GET /api/providers: %v %+v", err, r)
	}
	state := ""
	for _, p := range provs {
		if p.Name == "file" {
			state = p.State
		}
	}
	if state != "stored" {
		t.Errorf("/api/providers = %s, want the file provider in state stored", r.Body)
	}
	// ... and /api/problems says why, not only the log (issue 15).
	harness.TryGet(t, pollTimeout, g2.URL(t, "traefik", "/api/problems"), harness.BodyContains(dyn), harness.BodyContains("does not exist; keeping the last configuration"))

	// The directory comes back with new content: the provider, which kept
	// watching the parent, applies it.
	staged := filepath.Join(work, "staged")
	if err := os.Mkdir(staged, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, staged, "app.yml", whoamiConf(w2.URL(), "a"))
	if err := os.Rename(staged, dyn); err != nil {
		t.Fatal(err)
	}
	harness.TryGet(t, pollTimeout, g2.URL(t, "web", "/"), harness.Host("a.test"), harness.StatusIs(200), harness.BodyContains("Name: w2"))
	harness.TryGet(t, pollTimeout, g2.URL(t, "web", "/"), harness.Host("b.test"), harness.StatusIs(404))
}

// SIGHUP makes the file provider re-read its files (Traefik's behaviour),
// here with watching off so that only the signal can cause the change.
func TestSIGHUPReloads(t *testing.T) {
	w1 := harness.StartWhoamiProc(t, "w1")
	w2 := harness.StartWhoamiProc(t, "w2")
	work := t.TempDir()
	dyn := filepath.Join(work, "dynamic")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w1.URL(), "a"))
	static := strings.Replace(staticConfig(harness.FreeAddr(t), dyn, filepath.Join(work, "gantry.db"), "10ms"),
		"  file:\n", "  file:\n    watch: false\n", 1)
	g := harness.StartWith(t, harness.Options{Static: static, Dir: work})
	url := g.URL(t, "web", "/")
	harness.TryGet(t, pollTimeout, url, harness.Host("a.test"), harness.StatusIs(200), harness.BodyContains("Name: w1"))

	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w2.URL(), "a"))
	if err := g.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	harness.TryGet(t, pollTimeout, url, harness.Host("a.test"), harness.StatusIs(200), harness.BodyContains("Name: w2"))
}

// A corrupt store file is moved aside and gantry starts (never a crash
// loop), serving what its providers publish.
func TestCorruptStoreStartsEmpty(t *testing.T) {
	w1 := harness.StartWhoamiProc(t, "w1")
	work := t.TempDir()
	dyn := filepath.Join(work, "dynamic")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w1.URL(), "a"))
	db := filepath.Join(work, "gantry.db")
	if err := os.WriteFile(db, []byte("not a bbolt database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := harness.StartWith(t, harness.Options{Static: staticConfig(harness.FreeAddr(t), dyn, db, "10ms"), Dir: work})
	harness.TryGet(t, pollTimeout, g.URL(t, "web", "/"), harness.Host("a.test"), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	if aside, _ := filepath.Glob(db + ".corrupt-*"); len(aside) != 1 {
		t.Errorf("moved-aside files %v, want one", aside)
	}
	if !strings.Contains(g.Output(), "moved aside") {
		t.Errorf("no log line about the store being moved aside:\n%s", g.Output())
	}
}
