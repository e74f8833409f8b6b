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

	harness.TryGet(t, 20*time.Second, admin+"/api/cluster", harness.StatusIs(200), harness.BodyContains(`"id":"gantry-three"`))
	step(t, ctx, "open the cluster tab: three instances agreeing", 30*time.Second,
		chromedp.Navigate(admin+"/dashboard/#cluster"),
		chromedp.WaitVisible(chromedp.CSS(`#cluster-tab`)),
		chromedp.WaitVisible(chromedp.CSS(`#cluster-list tr[data-instance="gantry-three"][data-agree="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#cluster-list tr[data-instance="gantry-one"][data-agree="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#cluster-state[data-agree="true"]`)),
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
		chromedp.WaitVisible(chromedp.CSS(`#cluster-state[data-agree="false"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#cluster-list tr.disagree[data-instance="gantry-one"]`)),
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
		chromedp.WaitVisible(chromedp.CSS(`#cluster-list tr[data-instance="gantry-one"][data-agree="n/a"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#cluster-state[data-agree="true"]`)),
	)
	if s := textOf(t, ctx, "read the killed row", `#cluster-list tr[data-instance="gantry-one"]`, "innerText"); !strings.Contains(s, "critical") {
		t.Errorf("killed instance row %q, want critical", s)
	}
	_ = three
}
