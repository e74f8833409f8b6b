package dashboard

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestDashboardStaticReloadsAndDynamicEntryPoints: through the real binary
// and chromium, the Entrypoints tab lists a dynamic entrypoint a file asks
// for, marked dynamic with the provider and file that asked; a live static
// reload refused (log.format needs a restart) then an invalid static file
// are visible at a glance: the overview's static card turns red with the
// reason, the Static tab's badge counts it, its table lists each reload
// with trigger, outcome, refused change and reason, and the file's error
// with its line; the problems badge counts it too. Screenshots:
// integration/artifacts/static-overview.png, static-reloads.png,
// entrypoints.png.
func TestDashboardStaticReloadsAndDynamicEntryPoints(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	backend := "http://" + harness.StartWhoami(t, "backend-1")
	shop := harness.FreeAddr(t)
	// dynamicConfig's routers, one more on the entrypoint shop it asks for.
	dyn := strings.Replace(dynamicConfig(backend, "first"), "  services:\n",
		"    shop:\n      entryPoints: [shop]\n      rule: PathPrefix(`/`)\n      service: whoami\n  services:\n", 1)
	harness.WriteFile(t, dir, "dynamic.yml", dyn+fmt.Sprintf("entryPoints:\n  shop:\n    address: %q\n", shop))
	web, admin := harness.FreeAddr(t), harness.FreeAddr(t)
	static := func(extra string) string {
		return staticConfig(web, admin, dir) + fmt.Sprintf("dynamicEntryPoints:\n  allowed: [%q]\n", shop) + extra
	}
	g := harness.Start(t, static(""))
	e := &env{g: g, dir: dir, backend: backend, admin: g.URL(t, "traefik", "")}
	e.waitRouters(t, "first", "shop")
	harness.TryGet(t, 60*time.Second, "http://"+shop+"/", harness.StatusIs(200))

	step(t, ctx, "open the entrypoints tab and see shop marked dynamic", 30*time.Second,
		chromedp.Navigate(e.admin+"/dashboard/#entrypoints"),
		shown(chromedp.CSS(`#ep-list tr[data-name="shop"] .tag.dyn`)),
		shown(chromedp.CSS(`#live.on`)),
	)
	// The row is drawn when the entrypoints are read, and again with the
	// routers using them once those are read (app.js loadAll): wait for
	// the router.
	var row string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		row = textOf(t, ctx, "read shop's row", `#ep-list tr[data-name="shop"]`, "innerText")
		if strings.Contains(row, "shop@file") || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{shop, "dynamic", "file", "dynamic.yml", "shop@file"} {
		if !strings.Contains(row, want) {
			t.Errorf("entrypoint shop's row %q lacks %q", row, want)
		}
	}
	if web := textOf(t, ctx, "read web's row", `#ep-list tr[data-name="web"]`, "innerText"); !strings.Contains(web, "static") || strings.Contains(web, "dynamic") {
		t.Errorf("entrypoint web's row %q: want static", web)
	}
	shot(t, ctx, "entrypoints.png")

	// A reload that is refused: log.format needs a restart.
	step(t, ctx, "open the overview", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#overview'; undefined`),
		shown(chromedp.CSS(`#card-static`)),
	)
	if c := textOf(t, ctx, "read the static card", `#card-static`, "innerText"); !strings.Contains(c, "rev 1") || !strings.Contains(c, "not reloaded") {
		t.Errorf("static card at start: %q", c)
	}
	if n := textOf(t, ctx, "read the static badge", `#static-badge`, "textContent"); n != "0" {
		t.Errorf("static badge at start: %q, want 0", n)
	}
	harness.WriteFile(t, filepath.Dir(g.ConfigFile), filepath.Base(g.ConfigFile), static("log:\n  format: json\n"))
	step(t, ctx, "see the refused reload on the overview, live", 60*time.Second,
		shown(chromedp.CSS(`#card-static.bad`)),
		shown(chromedp.CSS(`#static-badge.some`)),
	)
	card := textOf(t, ctx, "read the static card", `#card-static`, "innerText")
	for _, want := range []string{"refused", "file", "log", "restart"} {
		if !strings.Contains(card, want) {
			t.Errorf("static card %q lacks %q", card, want)
		}
	}
	if n := textOf(t, ctx, "read the problems badge", `#problem-badge`, "textContent"); n == "0" {
		t.Error("problems badge is 0 with a refused static reload")
	}

	// Then a file that does not load.
	harness.WriteFile(t, filepath.Dir(g.ConfigFile), filepath.Base(g.ConfigFile), static("log:\n  format: json\nentryPoints: [\n"))
	step(t, ctx, "see the invalid reload in the Static tab", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#static'; undefined`),
		shown(chromedp.CSS(`#static-reloads tr[data-outcome="invalid"]`)),
		shown(chromedp.CSS(`#static-problem`)),
	)
	rows := value(t, ctx, "read the reloads", 60*time.Second, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#static-reloads tbody tr')].map((r) => r.innerText)`))
	if len(rows) != 2 {
		t.Fatalf("reloads table: %q, want 2 rows", rows)
	}
	if r := rows[0]; !strings.Contains(r, "invalid") || !strings.Contains(r, "file") || !strings.Contains(r, filepath.Base(g.ConfigFile)) {
		t.Errorf("newest reload row %q: want invalid, trigger file, the file's name", r)
	}
	if r := rows[1]; !strings.Contains(r, "refused") || !strings.Contains(r, "log") || !strings.Contains(r, "restart") {
		t.Errorf("older reload row %q: want refused, log, the reason", r)
	}
	if sum := textOf(t, ctx, "read the summary", `#static-summary`, "innerText"); !strings.Contains(sum, "Revision 1") || !strings.Contains(sum, "invalid") || strings.Contains(sum, "null") {
		t.Errorf("static summary %q", sum)
	}
	if n := textOf(t, ctx, "read the static badge", `#static-badge`, "textContent"); n != "1" {
		t.Errorf("static badge %q, want 1", n)
	}
	shot(t, ctx, "static-reloads.png")
	step(t, ctx, "back to the overview", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#overview'; undefined`),
		shown(chromedp.CSS(`#card-static.bad`)),
	)
	if c := textOf(t, ctx, "read the static card", `#card-static`, "innerText"); !strings.Contains(c, "invalid") {
		t.Errorf("static card after the invalid file: %q", c)
	}
	shot(t, ctx, "static-overview.png")
}

// TestStaticChangeNamesTheOption (issue 28 item 13): a live reload that
// adds log.format and log.noColor names those options on the Static tab and
// the overview's card ("log.format added"), never the bare section ("log
// added"); a changed entrypoint option is named in full
// (entryPoints.web.http.sanitizePath). Screenshot:
// static-option-names.png.
func TestStaticChangeNamesTheOption(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	backend := "http://" + harness.StartWhoami(t, "backend-1")
	harness.WriteFile(t, dir, "dynamic.yml", dynamicConfig(backend, "first"))
	web, admin := harness.FreeAddr(t), harness.FreeAddr(t)
	g := harness.Start(t, staticConfig(web, admin, dir))
	e := &env{g: g, dir: dir, backend: backend, admin: g.URL(t, "traefik", "")}
	e.waitRouters(t, "first")
	step(t, ctx, "open the static tab", 30*time.Second,
		chromedp.Navigate(e.admin+"/dashboard/#static"),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`#static-summary p`)),
	)
	next := strings.Replace(staticConfig(web, admin, dir), "  web:\n", "  web:\n    http:\n      sanitizePath: false\n", 1) + "log:\n  format: json\n  noColor: true\n"
	harness.WriteFile(t, filepath.Dir(g.ConfigFile), filepath.Base(g.ConfigFile), next)
	step(t, ctx, "see the reload", 60*time.Second,
		shown(chromedp.CSS(`#static-reloads tbody tr`)))
	row := textOf(t, ctx, "read the reload", `#static-reloads tbody tr`, "innerText")
	for _, want := range []string{"log.format added", "log.noColor added", "entryPoints.web.http.sanitizePath added"} {
		if !strings.Contains(row, want) {
			t.Errorf("reload row %q lacks %q", row, want)
		}
	}
	for _, bare := range []string{"log added", "entryPoints.web changed"} {
		if strings.Contains(row, bare) {
			t.Errorf("reload row %q says %q: name the option", row, bare)
		}
	}
	shot(t, ctx, "static-option-names.png")
	step(t, ctx, "open the overview", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#overview'; undefined`),
		shown(chromedp.CSS(`#card-static`)))
	if c := textOf(t, ctx, "read the static card", `#card-static`, "innerText"); !strings.Contains(c, "log.format added") || strings.Contains(c, "log added") {
		t.Errorf("static card %q: want log.format added", c)
	}
}
