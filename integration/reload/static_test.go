package reload

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// staticReload is /api/static as the tests read it.
type staticReload struct {
	Revision int `json:"revision"`
	Reloads  []struct {
		Revision int    `json:"revision"`
		Trigger  string `json:"trigger"`
		Outcome  string `json:"outcome"`
		Error    string `json:"error"`
		Applied  []struct {
			Path, Kind string
		} `json:"applied"`
		Refused []struct {
			Path, Kind, Reason string
		} `json:"refused"`
	} `json:"reloads"`
}

// getStatic reads /api/static at api ("host:port", plus a base path).
func getStatic(t *testing.T, api string) staticReload {
	t.Helper()
	var out staticReload
	harness.Try(t, pollTimeout, func() error {
		resp, err := http.Get("http://" + api + "/api/static")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/api/static: status %d", resp.StatusCode)
		}
		return json.NewDecoder(resp.Body).Decode(&out)
	})
	return out
}

// reloadStatic writes the static configuration file the way editors and
// config management do (rename over) and waits for gantry to log the n-th
// reload outcome line containing want.
func reloadStatic(t *testing.T, g *harness.Gantry, content, want string, n int) {
	t.Helper()
	harness.WriteFile(t, filepath.Dir(g.ConfigFile), filepath.Base(g.ConfigFile), content)
	harness.Try(t, pollTimeout, func() error {
		if c := g.CountOutput(want); c < n {
			return fmt.Errorf("%q logged %d times, want %d", want, c, n)
		}
		return nil
	})
}

// TestStaticReloadProvidersAndAPI is issue 18's live static reload of
// providers and API settings through the binary, under load on an
// unchanged entrypoint with a WebSocket open through it: the file
// provider's directory changes (rename-over of the static file): the new
// directory's routes serve, the old one's go; api.debug is turned on: the
// API serves /debug/vars; log.level is applied and log.format refused (named in
// the log, /api/static and /api/problems); a certificate resolver is added
// (without a challenge: skipped, its problem listed) then removed; an
// invalid edit changes nothing
// and is reported with its file and line; SIGHUP reloads too. Zero failed
// requests, the WebSocket stays open.
func TestStaticReloadProvidersAndAPI(t *testing.T) {
	w := harness.StartWhoamiProc(t, "w1")
	work := t.TempDir()
	dyn1, dyn2 := filepath.Join(work, "dyn1"), filepath.Join(work, "dyn2")
	for _, d := range []string{dyn1, dyn2} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	harness.WriteFile(t, dyn1, "app.yml", whoamiConf(w.URL(), "app", "ws", "old"))
	harness.WriteFile(t, dyn2, "app.yml", whoamiConf(w.URL(), "app", "ws", "new"))
	web, api := harness.FreeAddr(t), harness.FreeAddr(t)
	static := func(dyn string, debug bool, level, format string, resolver bool) string {
		res := ""
		if resolver { // no challenge: skipped, and a problem says why
			res = "certificatesResolvers:\n  le:\n    acme:\n      email: ops@example.com\n"
		}
		return res + fmt.Sprintf(`entryPoints:
  web:
    address: %q
  traefik:
    address: %q
api:
  insecure: true
  debug: %v
providers:
  providersThrottleDuration: 20ms
  file:
    directory: %q
    debugLogGeneratedTemplate: %v
store:
  path: %q
log:
  level: %s
  format: %s
`, web, api, debug, dyn, level == "DEBUG", filepath.Join(work, "gantry.db"), level, format)
	}
	g := harness.StartWith(t, harness.Options{Static: static(dyn1, false, "INFO", "common", false), Dir: work})
	url := g.URL(t, "web", "/")
	harness.TryGet(t, pollTimeout, url, harness.Host("app.test"), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	harness.TryGet(t, pollTimeout, url, harness.Host("old.test"), harness.StatusIs(200))
	harness.TryGet(t, pollTimeout, "http://"+api+"/debug/vars", harness.StatusIs(404))
	if s := getStatic(t, api); s.Revision != 1 || len(s.Reloads) != 0 {
		t.Fatalf("/api/static at start: %+v, want revision 1 and no reload", s)
	}
	ws := startWS(t, web, "ws.test")

	ctx := context.Background()
	var wg sync.WaitGroup
	var keep, fresh loadResult
	const loadFor = 6 * time.Second
	wg.Go(func() { keep = runLoad(ctx, url, "app.test", loadFor, true) })
	wg.Go(func() { fresh = runLoad(ctx, url, "app.test", loadFor, false) })
	time.Sleep(500 * time.Millisecond)

	// 1. Provider settings, API settings, log level (applied) and log
	// format (refused), in one edit.
	reloadStatic(t, g, static(dyn2, true, "DEBUG", "json", true), "static configuration reloaded", 1)
	harness.TryGet(t, pollTimeout, url, harness.Host("new.test"), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	harness.TryGet(t, pollTimeout, url, harness.Host("old.test"), harness.StatusIs(404))
	harness.TryGet(t, pollTimeout, "http://"+api+"/debug/vars", harness.StatusIs(200))
	s := getStatic(t, api)
	if s.Revision != 2 || len(s.Reloads) != 1 {
		t.Fatalf("/api/static after the reload: %+v, want revision 2, one reload", s)
	}
	r := s.Reloads[0]
	applied := map[string]bool{}
	for _, a := range r.Applied {
		applied[a.Path] = true
	}
	if r.Outcome != "partial" || r.Trigger != "file" || !applied["providers.file"] || !applied["api"] || !applied["log.level"] || !applied["certificatesResolvers.le"] {
		t.Errorf("reload: %+v, want partial from file, providers.file, api, log.level and certificatesResolvers.le applied", r)
	}
	if len(r.Refused) != 1 || r.Refused[0].Path != "log" || !strings.Contains(r.Refused[0].Reason, "restart") {
		t.Errorf("refused: %+v, want log (format) with a reason naming the restart", r.Refused)
	}
	if out := g.Output(); !strings.Contains(out, `msg="static configuration reload: change not applied live; the running value is kept" field=log`) {
		t.Errorf("no log line names the refused field log")
	}
	// waitProblems waits until /api/problems holds every one of want (and
	// none of lack).
	waitProblems := func(why string, want, lack []string) {
		t.Helper()
		harness.Try(t, pollTimeout, func() error {
			resp, err := harness.Get("http://" + api + "/api/problems")
			if err != nil {
				return err
			}
			for _, w := range want {
				if !strings.Contains(string(resp.Body), w) {
					return fmt.Errorf("%s: /api/problems lacks %q: %s", why, w, resp.Body)
				}
			}
			for _, l := range lack {
				if strings.Contains(string(resp.Body), l) {
					return fmt.Errorf("%s: /api/problems still holds %q: %s", why, l, resp.Body)
				}
			}
			return nil
		})
	}
	waitProblems("the refused log format and the added resolver", []string{"log changed not applied live", "resolver skipped", "le.acme: no challenge"}, nil)
	// log.level DEBUG is live: the new file provider's debug lines appear
	// (in the text format kept).
	harness.Try(t, pollTimeout, func() error {
		if !strings.Contains(g.Output(), `level=DEBUG msg="rendered configuration template"`) {
			return fmt.Errorf("no DEBUG line since log.level became DEBUG")
		}
		return nil
	})

	// 2. An invalid edit: nothing changes, the file and line are reported.
	reloadStatic(t, g, "entryPoints:\n  web:\n    address: [oops\n", "static configuration reload: invalid, nothing changed", 1)
	waitProblems("the invalid edit", []string{"reload refused", "gantry.yml: yaml: line "}, nil)
	s = getStatic(t, api)
	if s.Revision != 2 || s.Reloads[0].Outcome != "invalid" || !strings.Contains(s.Reloads[0].Error, "line ") {
		t.Errorf("/api/static after the invalid edit: %+v", s)
	}
	harness.TryGet(t, pollTimeout, url, harness.Host("new.test"), harness.StatusIs(200))

	// 3. Back to a valid file, with a SIGHUP sent at once. The file watcher
	// and the signal race: whichever reads the file first applies it and
	// the other finds it unchanged. Both are recorded, and exactly one of
	// them applied it.
	harness.WriteFile(t, work, "gantry.yml", static(dyn1, true, "DEBUG", "common", false))
	if err := g.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	harness.TryGet(t, pollTimeout, url, harness.Host("old.test"), harness.StatusIs(200))
	harness.Try(t, pollTimeout, func() error {
		s = getStatic(t, api)
		var sighup bool
		applied := 0
		for _, rl := range s.Reloads {
			if rl.Outcome == "invalid" {
				break // newest first: what came before step 2 does not count
			}
			if rl.Trigger == "SIGHUP" && (rl.Outcome == "applied" || rl.Outcome == "unchanged") {
				sighup = true
			}
			if rl.Outcome == "applied" {
				applied++
			}
		}
		if !sighup || applied != 1 {
			return fmt.Errorf("want the SIGHUP reload recorded and one applied reload since the invalid edit: %+v", s.Reloads)
		}
		return nil
	})
	waitProblems("a good reload without the resolver", nil, []string{"reload refused", "not applied live", "resolver skipped"})

	wg.Wait()
	t.Logf("keep-alive: %v", keep)
	t.Logf("new connections: %v", fresh)
	for name, res := range map[string]loadResult{"keep-alive": keep, "new connections": fresh} {
		if res.failed != 0 || res.sent == 0 {
			t.Errorf("%s: %d of %d requests failed: %q", name, res.failed, res.sent, res.firstErrs)
		}
	}
	if err := ws.finish(); err != nil {
		t.Errorf("websocket on the unchanged entrypoint broke: %v (after %d echoes)", err, ws.echoes.Load())
	}
}

// TestStaticReloadEntryPoints is issue 18's live static reload of
// entrypoints through the binary, under load on an unchanged entrypoint
// (500 req/s keep-alive plus 500 req/s on a new connection each) with a
// WebSocket open through it, in one edit of the static file:
//   - an entrypoint is added: it listens and serves the routes of
//     routers without entryPoints (as at start);
//   - one changes its settings on the same address
//     (forwardedHeaders.insecure): the new settings apply and its port never
//     refuses a connection (new connections sent through the change: 0
//     failed);
//   - the API's address (the traefik entrypoint's) moves: the API answers
//     on the new address and the old one is closed after;
//   - one is removed: its port refuses connections.
//
// The unchanged entrypoint: 0 failed requests, the WebSocket stays open.
// A bind failure (an added entrypoint on a port in use) is then refused,
// naming the entrypoint, and the rest of that edit applies (a UDP
// entrypoint moved to another port answers there).
func TestStaticReloadEntryPoints(t *testing.T) {
	w := harness.StartWhoamiProc(t, "w1")
	work := t.TempDir()
	dyn := filepath.Join(work, "dynamic")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w.URL(), "app", "ws"))
	echo := udpEcho(t)
	harness.WriteFile(t, dyn, "udp.yml", fmt.Sprintf("udp:\n  routers:\n    echo:\n      entryPoints: [dns]\n      service: echo\n"+
		"  services:\n    echo:\n      loadBalancer:\n        servers:\n          - address: %q\n", echo))
	dnsA, dnsB := harness.FreeAddr(t), harness.FreeAddr(t) // UDP ports: free on TCP, almost surely on UDP
	web, side, gone, extra := harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t)
	api1, api2 := harness.FreeAddr(t), harness.FreeAddr(t)
	static := func(second bool) string {
		eps := fmt.Sprintf("  web:\n    address: %q\n  dns:\n    address: %q\n", web, dnsA+"/udp")
		if second {
			eps += fmt.Sprintf("  side:\n    address: %q\n    forwardedHeaders:\n      insecure: true\n", side)
			eps += fmt.Sprintf("  extra:\n    address: %q\n", extra)
			eps += fmt.Sprintf("  traefik:\n    address: %q\n", api2)
		} else {
			eps += fmt.Sprintf("  side:\n    address: %q\n", side)
			eps += fmt.Sprintf("  gone:\n    address: %q\n", gone)
			eps += fmt.Sprintf("  traefik:\n    address: %q\n", api1)
		}
		return fmt.Sprintf("entryPoints:\n%sapi:\n  insecure: true\nproviders:\n  providersThrottleDuration: 20ms\n  file:\n    directory: %q\nstore:\n  path: %q\n",
			eps, dyn, filepath.Join(work, "gantry.db"))
	}
	g := harness.StartWith(t, harness.Options{Static: static(false), Dir: work})
	url, sideURL := "http://"+web+"/", "http://"+side+"/"
	harness.TryGet(t, pollTimeout, url, harness.Host("app.test"), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	harness.TryGet(t, pollTimeout, "http://"+gone+"/", harness.Host("app.test"), harness.StatusIs(200))
	xff := func() string {
		resp := harness.TryGet(t, pollTimeout, sideURL, harness.Host("app.test"), harness.Header("X-Forwarded-For", "203.0.113.7"), harness.StatusIs(200))
		for line := range strings.SplitSeq(string(resp.Body), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "X-Forwarded-For: "); ok {
				return v
			}
		}
		return ""
	}
	if got := xff(); got != "127.0.0.1" {
		t.Fatalf("side before: X-Forwarded-For %q, want 127.0.0.1 (untrusted)", got)
	}
	ws := startWS(t, web, "ws.test")

	ctx := context.Background()
	var wg sync.WaitGroup
	var keep, fresh, sideFresh loadResult
	const loadFor = 5 * time.Second
	wg.Go(func() { keep = runLoad(ctx, url, "app.test", loadFor, true) })
	wg.Go(func() { fresh = runLoad(ctx, url, "app.test", loadFor, false) })
	wg.Go(func() { sideFresh = runLoad(ctx, sideURL, "app.test", loadFor, false) })
	time.Sleep(time.Second)

	reloadStatic(t, g, static(true), "static configuration reloaded", 1)
	harness.TryGet(t, pollTimeout, "http://"+extra+"/", harness.Host("app.test"), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	harness.TryGet(t, pollTimeout, "http://"+api2+"/api/static", harness.StatusIs(200), harness.BodyContains(`"revision":2`))
	if got := xff(); got != "203.0.113.7, 127.0.0.1" {
		t.Errorf("side after forwardedHeaders.insecure: X-Forwarded-For %q, want the client's value kept", got)
	}
	refused := func(addr string) error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return nil
		}
		c.Close()
		return fmt.Errorf("%s still accepts connections", addr)
	}
	harness.Try(t, pollTimeout, func() error { return refused(api1) })
	harness.Try(t, pollTimeout, func() error { return refused(gone) })
	wg.Wait()
	for name, res := range map[string]loadResult{"web keep-alive": keep, "web new connections": fresh, "side (changed) new connections": sideFresh} {
		t.Logf("%s: %v", name, res)
		if res.failed != 0 || res.sent == 0 {
			t.Errorf("%s: %d of %d requests failed: %q", name, res.failed, res.sent, res.firstErrs)
		}
	}
	if err := ws.finish(); err != nil {
		t.Errorf("websocket on the unchanged entrypoint broke: %v (after %d echoes)", err, ws.echoes.Load())
	}
	s := getStatic(t, api2)
	if r := s.Reloads[0]; r.Outcome != "applied" || len(r.Applied) != 4 {
		t.Errorf("reload %+v, want 4 entrypoint changes applied", r)
	}

	// A port in use: that entrypoint is refused (named), the rest applies.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	next := static(true) + "log:\n  level: INFO\n"
	next = strings.Replace(next, "entryPoints:\n", fmt.Sprintf("entryPoints:\n  taken:\n    address: %q\n", busy.Addr().String()), 1)
	next = strings.Replace(next, dnsA+"/udp", dnsB+"/udp", 1) // and the UDP entrypoint moves
	harness.Try(t, pollTimeout, func() error { return udpAsk(dnsA, "before") })
	reloadStatic(t, g, next, "static configuration reloaded", 2)
	s = getStatic(t, api2)
	r := s.Reloads[0]
	if r.Outcome != "partial" || len(r.Refused) != 1 || r.Refused[0].Path != "entryPoints.taken" || !strings.Contains(r.Refused[0].Reason, "address already in use") || len(r.Applied) != 2 {
		t.Errorf("reload with a busy port: %+v, want entryPoints.taken refused (address in use), the rest (log.level, entryPoints.dns) applied", r)
	}
	harness.Try(t, pollTimeout, func() error { return udpAsk(dnsB, "after") })
	if err := udpAsk(dnsA, "old"); err == nil {
		t.Errorf("the UDP entrypoint still answers on its old address %s", dnsA)
	}
	harness.TryGet(t, pollTimeout, url, harness.Host("app.test"), harness.StatusIs(200))
}

// A static reload asked for while a binary upgrade is in progress waits
// for its end: the new binary (here one that fails after 2 s) would read
// the file itself; once the upgrade failed, this process applies it.
func TestStaticReloadDeferredDuringUpgrade(t *testing.T) {
	w := harness.StartWhoamiProc(t, "w1")
	work := t.TempDir()
	dyn1, dyn2 := filepath.Join(work, "dyn1"), filepath.Join(work, "dyn2")
	for _, d := range []string{dyn1, dyn2} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	harness.WriteFile(t, dyn1, "app.yml", whoamiConf(w.URL(), "old"))
	harness.WriteFile(t, dyn2, "app.yml", whoamiConf(w.URL(), "new"))
	web := harness.FreeAddr(t)
	cfg := filepath.Join(work, "gantry.yml")
	static := func(dyn string) string { return staticConfig(web, dyn, filepath.Join(work, "gantry.db"), "20ms") }
	harness.WriteFile(t, work, "gantry.yml", static(dyn1))
	bin := filepath.Join(work, "bin", "gantry")
	if err := os.Mkdir(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	installBinary(t, harness.GantryBin(t), bin)
	g := harness.StartProcess(t, "gantry", work, bin, []string{"--configFile=" + cfg}, nil)
	url := "http://" + web + "/"
	harness.TryGet(t, pollTimeout, url, harness.Host("old.test"), harness.StatusIs(200))

	// The new binary fails once the test has seen the reload deferred (at
	// most 20 s, within gantry's 30 s wait for it): a fixed delay could end
	// before a loaded machine has noticed the edit.
	slow, release := filepath.Join(work, "slow"), filepath.Join(work, "release")
	script := fmt.Sprintf("#!/bin/sh\ni=0\nwhile [ ! -e %q ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done\nexit 3\n", release)
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	installBinary(t, slow, bin)
	if err := g.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	g.WaitOutput(t, pollTimeout, "upgrade: new process started")
	harness.WriteFile(t, work, "gantry.yml", static(dyn2))
	g.WaitOutput(t, pollTimeout, "static configuration reload deferred: a binary upgrade is in progress")
	if strings.Contains(g.Output(), "static configuration reloaded") {
		t.Fatal("reloaded during the upgrade")
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	g.WaitOutput(t, pollTimeout, "upgrade failed; this process keeps serving")
	g.WaitOutput(t, pollTimeout, "static configuration reloaded")
	harness.TryGet(t, pollTimeout, url, harness.Host("new.test"), harness.StatusIs(200))
}
