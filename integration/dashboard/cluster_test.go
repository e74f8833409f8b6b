package dashboard

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestClusterPage: three instances register in a real Consul agent; the
// dashboard of one shows a Cluster tab listing all three with their
// configuration versions, agreeing. A new route on one instance only makes
// it disagree: the summary says so, its row is marked, the tab's badge
// counts it. A killed instance turns critical and is no longer counted.
// Screenshots: cluster-agree.png, cluster-disagree.png. Without
// cluster.consul there is no Cluster tab (TestDashboardInBrowser's
// instance).
func TestClusterPage(t *testing.T) {
	consul := harness.StartConsul(t, "gantry-dashboard-test")
	ctx := browser(t)
	backend := "http://" + harness.StartWhoami(t, "backend-1")
	// Each instance reads its own directory (as on separate hosts) with the
	// same file: they agree on what they route although the paths differ.
	// Only gantry-one watches, so an edit of its file reaches it alone.
	dirs := map[string]string{}
	type instance struct{ g *harness.Gantry }
	start := func(id string, watch bool) instance {
		dir := t.TempDir()
		dirs[id] = dir
		harness.WriteFile(t, dir, "dynamic.yml", dynamicConfig(backend, "first"))
		return instance{harness.Start(t, fmt.Sprintf(`entryPoints:
  web:
    address: %q
  traefik:
    address: %q
api:
  insecure: true
providers:
  providersThrottleDuration: 50ms
  file:
    directory: %q
    watch: %v
cluster:
  consul:
    address: %q
  instanceID: %s
  ttl: 2s
`, harness.FreeAddr(t), harness.FreeAddr(t), dir, watch, consul, id))}
	}
	one, two, three := start("gantry-one", true), start("gantry-two", false), start("gantry-three", false)
	admin := two.g.URL(t, "traefik", "")
	agree := func(id string) string {
		return textOf(t, ctx, "read whether "+id+" agrees", `#cluster-list tr[data-instance="`+id+`"]`, "dataset.agree")
	}

	harness.TryGet(t, 60*time.Second, admin+"/api/cluster", harness.StatusIs(200), harness.BodyContains(`"id":"gantry-three"`))
	step(t, ctx, "open the cluster tab: three instances agreeing", 30*time.Second,
		chromedp.Navigate(admin+"/dashboard/#cluster"),
		shown(chromedp.CSS(`#cluster-tab`)),
		shown(chromedp.CSS(`#cluster-list tr[data-instance="gantry-three"][data-agree="true"]`)),
		shown(chromedp.CSS(`#cluster-list tr[data-instance="gantry-one"][data-agree="true"]`)),
		shown(chromedp.CSS(`#cluster-state[data-agree="true"]`)),
	)
	summary := textOf(t, ctx, "read the summary", `#cluster-state`, "innerText")
	if !strings.Contains(summary, "All 3 passing instances of gantry serve configuration") {
		t.Errorf("summary %q", summary)
	}
	self := textOf(t, ctx, "read this instance's row", `#cluster-list tr[data-instance="gantry-two"]`, "innerText")
	if !strings.Contains(self, "this instance") || !strings.Contains(self, "passing") {
		t.Errorf("own row %q, want it marked and passing", self)
	}
	version := textOf(t, ctx, "read a version", `#cluster-list tr[data-instance="gantry-one"] td:nth-child(3)`, "title")
	if len(version) != 64 {
		t.Errorf("config version %q, want the 64-hex version", version)
	}
	shot(t, ctx, "cluster-agree.png")

	// A router added to the file: only gantry-one watches it and serves
	// another version.
	harness.WriteFile(t, dirs["gantry-one"], "dynamic.yml", dynamicConfig(backend, "first", "extra"))
	step(t, ctx, "see gantry-one disagree", 30*time.Second,
		shown(chromedp.CSS(`#cluster-state[data-agree="false"]`)),
		shown(chromedp.CSS(`#cluster-list tr.disagree[data-instance="gantry-one"]`)),
	)
	if got := agree("gantry-three"); got != "true" {
		t.Errorf("gantry-three agrees=%q, want true (the majority's version)", got)
	}
	summary = textOf(t, ctx, "read the summary", `#cluster-state`, "innerText")
	if !strings.Contains(summary, "disagree") || !strings.Contains(summary, "on 2") || !strings.Contains(summary, "on 1") {
		t.Errorf("summary %q, want the two versions with their counts", summary)
	}
	if badge := textOf(t, ctx, "read the badge", `#cluster-badge`, "innerText"); badge != "1" {
		t.Errorf("cluster badge %q, want 1", badge)
	}
	shot(t, ctx, "cluster-disagree.png")

	// Killed: its TTL check turns critical; it no longer counts.
	if err := one.g.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	step(t, ctx, "see gantry-one critical and the others agree", 30*time.Second,
		shown(chromedp.CSS(`#cluster-list tr[data-instance="gantry-one"][data-agree="n/a"]`)),
		shown(chromedp.CSS(`#cluster-state[data-agree="true"]`)),
	)
	if s := textOf(t, ctx, "read the killed row", `#cluster-list tr[data-instance="gantry-one"]`, "innerText"); !strings.Contains(s, "critical") {
		t.Errorf("killed instance row %q, want critical", s)
	}
	_ = three
}

// TestClusterHeaderAndRegistration (issue 28 item 9): with no
// cluster.port, the instance registers the port of its first entrypoint
// that serves traffic (web), not the API's (traefik, which sorts first),
// so Consul DNS sends clients to the proxy; the header's version is the
// one the Cluster tab lists for this instance; at 1400 px the header with
// the Cluster tab stays on one line, every tab visible. Screenshot:
// cluster-header.png.
func TestClusterHeaderAndRegistration(t *testing.T) {
	consul := harness.StartConsul(t, "gantry-dashboard-test")
	ctx := browser(t)
	backend := "http://" + harness.StartWhoami(t, "backend-1")
	dir := t.TempDir()
	harness.WriteFile(t, dir, "dynamic.yml", dynamicConfig(backend, "first"))
	web := harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`entryPoints:
  web:
    address: %q
  traefik:
    address: %q
api:
  insecure: true
providers:
  file:
    directory: %q
cluster:
  consul:
    address: %q
  instanceID: gantry-solo
  ttl: 2s
`, web, harness.FreeAddr(t), dir, consul))
	admin := g.URL(t, "traefik", "")
	_, webPort, _ := strings.Cut(web, ":")
	harness.TryGet(t, 60*time.Second, admin+"/api/cluster", harness.StatusIs(200),
		harness.BodyContains(`"id":"gantry-solo"`), harness.BodyContains(`"port":`+webPort+`,`))
	step(t, ctx, "open the cluster tab", 30*time.Second,
		chromedp.Navigate(admin+"/dashboard/#cluster"),
		shown(chromedp.CSS(`#cluster-list tr[data-instance="gantry-solo"][data-agree="true"]`)),
		shown(chromedp.CSS(`#live.on`)),
	)
	row := textOf(t, ctx, "read the instance's row", `#cluster-list tr[data-instance="gantry-solo"]`, "innerText")
	if !strings.Contains(row, ":"+webPort) {
		t.Errorf("instance row %q, want the web entrypoint's port %s", row, webPort)
	}
	var header, listed string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		header = textOf(t, ctx, "read the header's version", `#version`, "textContent")
		listed = textOf(t, ctx, "read the listed version", `#cluster-list tr[data-instance="gantry-solo"] td:nth-child(3)`, "textContent")
		if header == listed {
			break
		}
	}
	if header == "" || header != listed {
		t.Errorf("header version %q, Cluster tab's for this instance %q: want the same", header, listed)
	}
	layout := value(t, ctx, "measure the header", 60*time.Second, chromedp.Evaluate[[]float64](`(() => {
		const tabs = [...document.querySelectorAll('#tabs a')].filter((a) => !a.hidden);
		const tops = new Set(tabs.map((a) => Math.round(a.getBoundingClientRect().top)));
		const nav = document.getElementById('tabs'), v = document.getElementById('version').getBoundingClientRect(), h = document.querySelector('header').getBoundingClientRect();
		return [tops.size, nav.scrollWidth - nav.clientWidth, h.height, v.bottom - h.bottom, v.right - window.innerWidth];
	})()`))
	if layout[0] != 1 || layout[1] > 0 || layout[2] > 60 || layout[3] > 0 || layout[4] > 0 {
		t.Errorf("header at 1400 px: %v rows of tabs, %vpx of tabs hidden, %vpx high, version %vpx below and %vpx right of it: want one line, everything visible", layout[0], layout[1], layout[2], layout[3], layout[4])
	}
	shot(t, ctx, "cluster-header.png")
}
