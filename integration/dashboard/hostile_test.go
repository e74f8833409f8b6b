package dashboard

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// hostileNames are router names a stranger can write in a label or a
// file: quotes, markup that would run if parsed as HTML, characters with
// a meaning in URLs and hashes, a name with no break opportunity, unicode.
var hostileNames = []string{
	`quote"name`,
	`<img src=x onerror="window.gantryXSS=1">`,
	`<script>window.gantryXSS=2</script>`,
	"long-" + strings.Repeat("x", 300),
	"ünïcødé-路由",
	"pct%2Fname",
	"hash#name",
	"slash/name",
	"sp ace",
}

// TestHostileNames: routers and services with hostile names are listed
// as text (no markup runs), each one's page opens from its link with its
// name, status, route picture and loaded chart, and the longest name
// wraps: the routers table and the overview's recent changes fit the
// window (before, a 300-character name pushed the rule, entrypoints and
// rates off screen). Screenshots: hostile-routers.png, hostile-router.png.
func TestHostileNames(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	backend := "http://" + harness.StartWhoami(t, "backend-1")
	var b strings.Builder
	b.WriteString("http:\n  routers:\n")
	for i, n := range hostileNames {
		fmt.Fprintf(&b, "    %q:\n      entryPoints: [web]\n      rule: Host(`h%d.example`)\n      service: %q\n", n, i, "svc-"+n)
	}
	b.WriteString("  services:\n")
	for _, n := range hostileNames {
		fmt.Fprintf(&b, "    %q:\n      loadBalancer:\n        servers:\n          - url: %q\n", "svc-"+n, backend)
	}
	harness.WriteFile(t, dir, "dynamic.yml", b.String())
	g := harness.Start(t, staticConfig(harness.FreeAddr(t), harness.FreeAddr(t), dir))
	admin := g.URL(t, "traefik", "")
	harness.TryGet(t, 30*time.Second, admin+"/api/http/routers", harness.StatusIs(200), harness.BodyContains(`"name":"sp ace@file"`))

	step(t, ctx, "open the routers page", 30*time.Second,
		chromedp.Navigate(admin+"/dashboard/#routers"),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`#routers tbody tr[data-name="sp ace@file"]`)))
	names := value(t, ctx, "read the names", 30*time.Second, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#routers tbody td.name a')].map((a) => a.textContent)`))
	for _, n := range hostileNames {
		if !slices.Contains(names, n+"@file") {
			t.Errorf("routers page lacks %q as text; names shown: %q", n, names)
		}
	}
	fits := `(() => { const tb = document.querySelector('#routers table'), rule = document.querySelector('#routers tbody tr[data-name^="long-"] td.rule');
		return tb.getBoundingClientRect().right <= window.innerWidth + 1 && rule.getBoundingClientRect().right <= window.innerWidth + 1 })()`
	if !value(t, ctx, "measure the routers table", 30*time.Second, chromedp.Evaluate[bool](fits)) {
		t.Error("the routers table is wider than the window with a 300-character router name: its rule column is off screen")
	}
	shot(t, ctx, "hostile-routers.png")

	for _, n := range hostileNames {
		name := n + "@file"
		sel := fmt.Sprintf(`#routers tbody tr[data-name=%q] td.name a`, name)
		step(t, ctx, "open the page of "+name, 30*time.Second,
			chromedp.Evaluate[chromedp.Void](`location.hash = '#routers'; undefined`),
			shown(chromedp.CSS(sel)),
			chromedp.Click(chromedp.CSS(sel)),
			shown(chromedp.CSS(`#detail-body [data-charts="router"][data-loaded="true"]`)),
			shown(chromedp.CSS(`#detail-body .flow a.box.service`)))
		if got := textOf(t, ctx, "read the header", `#detail-body .dhead h2 .mono`, "textContent"); got != name {
			t.Errorf("page header %q, want %q", got, name)
		}
		if st := textOf(t, ctx, "read the status", `#detail-body .dhead h2 .status`, "textContent"); st != "enabled" {
			t.Errorf("router %q is %q, want enabled", name, st)
		}
		if strings.HasPrefix(n, "long-") {
			shot(t, ctx, "hostile-router.png")
			if !value(t, ctx, "measure the page", 30*time.Second, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth + 1`)) {
				t.Error("the long-named router's page is wider than the window")
			}
		}
	}
	step(t, ctx, "show the overview", 30*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#overview'; undefined`),
		shown(chromedp.CSS(`#changelog li`)))
	if !value(t, ctx, "measure the overview", 30*time.Second, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth + 1`)) {
		t.Error("the overview (recent changes naming the long router) is wider than the window")
	}
	if xss := value(t, ctx, "read the markers", 5*time.Second, chromedp.Evaluate[int](`window.gantryXSS || 0`)); xss != 0 {
		t.Errorf("a router name ran as markup (marker %d)", xss)
	}
}
