package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// whyConfig: router pay balances two servers, one of which answers 500
// (its /health was set so, and the traffic asks for /health); router
// search has one health-checked server that refuses connections; router
// fine is healthy.
func whyConfig(good, bad, dead string) string {
	return fmt.Sprintf(`http:
  routers:
    pay:
      entryPoints: [web]
      rule: Host(`+"`pay.example`"+`)
      service: pay
    search:
      entryPoints: [web]
      rule: Host(`+"`search.example`"+`)
      service: search
    fine:
      entryPoints: [web]
      rule: Host(`+"`fine.example`"+`)
      service: fine
  services:
    pay:
      loadBalancer:
        servers: [{url: "%s"}, {url: "%s"}]
    fine:
      loadBalancer:
        servers: [{url: "%s"}]
    search:
      loadBalancer:
        healthCheck: {path: /health, interval: 200ms, timeout: 500ms}
        servers: [{url: "http://%s"}]
`, good, bad, good, dead)
}

// TestDashboardTellsWhy is issue 28's ten-second test for items 5–8, through
// the binary: a router whose only server is down, one of whose two servers
// answers 500, a healthy one, and an unreachable Consul agent.
func TestDashboardTellsWhy(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	good := harness.StartWhoamiProc(t, "pay-a")
	bad := harness.StartWhoamiProc(t, "pay-b")
	setHealth(t, bad.URL(), 500)
	dead := harness.DeadAddr(t)
	harness.WriteFile(t, dir, "dynamic.yml", whyConfig(good.URL(), bad.URL(), dead))
	static := staticConfig(harness.FreeAddr(t), harness.FreeAddr(t), dir) + fmt.Sprintf(`  consulCatalog:
    exposedByDefault: false
    endpoint:
      address: %q
`, harness.DeadAddr(t))
	g := harness.Start(t, static)
	e := &env{g: g, dir: dir, admin: g.URL(t, "traefik", "")}
	e.waitRouters(t, "pay", "search", "fine")

	// Steady traffic for the whole test: pay.example/health (half of it
	// answered 500 by server b) and fine.example.
	tctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { stop(); <-done })
	go func() {
		defer close(done)
		client := &http.Client{Timeout: 2 * time.Second}
		for i := 0; tctx.Err() == nil; i++ {
			host, path := "pay.example", "/health"
			if i%3 == 2 {
				host, path = "fine.example", "/"
			}
			req, _ := http.NewRequestWithContext(tctx, "GET", g.URL(t, "web", path), nil)
			req.Host = host
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()

	step(t, ctx, "open the overview", 30*time.Second,
		chromedp.Navigate(e.admin+"/dashboard/#overview"),
		shown(chromedp.CSS(`#live.on`)))

	t.Run("item8-dependencies", func(t *testing.T) {
		step(t, ctx, "see the Consul agent's outage on the overview", 30*time.Second,
			shown(chromedp.CSS(`#deps.bad li[data-dep="consulcatalog"]`)))
		txt := textOf(t, ctx, "read the outage", `#deps li[data-dep="consulcatalog"]`, "innerText")
		if !strings.Contains(txt, "connection refused") || !strings.Contains(txt, "last configuration keeps serving") {
			t.Errorf("overview outage reads %q, want the reason (connection refused) and what keeps serving", txt)
		}
		top := value(t, ctx, "where the outage is", 60*time.Second, chromedp.Evaluate[bool](
			`document.getElementById('deps').getBoundingClientRect().top < document.getElementById('cards').getBoundingClientRect().top`))
		if !top {
			t.Error("the outage is not above the overview's cards")
		}
		shot(t, ctx, "why-overview.png")
		step(t, ctx, "see it atop Problems", 60*time.Second,
			chromedp.Evaluate[chromedp.Void](`location.hash = '#problems'; undefined`),
			shown(chromedp.CSS(`#problem-deps.bad li[data-dep="consulcatalog"]`)))
		shot(t, ctx, "why-problems.png")
	})

	t.Run("item5-status-combines-health", func(t *testing.T) {
		step(t, ctx, "open the routers", 60*time.Second,
			chromedp.Evaluate[chromedp.Void](`location.hash = '#routers'; undefined`),
			shown(chromedp.CSS(`#routers tbody tr[data-name="search@file"] td.status.down`)))
		for _, w := range []struct{ sel, want string }{
			{`#routers tbody tr[data-name="search@file"] td.status`, "down"},
			{`#routers tbody tr[data-name="fine@file"] td.status`, "enabled"},
			{`#services tbody tr[data-name="search@file"] td.status`, "down"},
			{`#services tbody tr[data-name="fine@file"] td.status`, "enabled"},
		} {
			if got := textOf(t, ctx, "read "+w.sel, w.sel, "textContent"); got != w.want {
				t.Errorf("%s reads %q, want %q", w.sel, got, w.want)
			}
		}
		step(t, ctx, "pay turns degraded (one server answers 500)", 60*time.Second,
			shown(chromedp.CSS(`#routers tbody tr[data-name="pay@file"] td.status.degraded`)))
		heads := value(t, ctx, "read the table heads", 60*time.Second, chromedp.Evaluate[[]string](
			`[...document.querySelectorAll('#routers th, #services th')].map(th => th.textContent)`))
		for _, h := range heads {
			if h == "Errors" {
				t.Errorf("a column is still called %q (configuration errors or 5xx?): %v", h, heads)
			}
		}
		shot(t, ctx, "why-routers.png")
		step(t, ctx, "open search's page", 60*time.Second,
			chromedp.Evaluate[chromedp.Void](`location.hash = '#router/search@file'; undefined`),
			shown(chromedp.CSS(`#detail-body .flow a.box[data-server].down`)))
		if got := textOf(t, ctx, "read the header", `#detail-body .dhead h2 .status`, "textContent"); got != "down" {
			t.Errorf("router header reads %q, want down", got)
		}
		for _, kind := range []string{"router", "service"} {
			cls := value(t, ctx, "read the "+kind+" box", 60*time.Second, chromedp.Evaluate[string](
				`document.querySelector('#detail-body .flow a.box[data-kind="`+kind+`"]').className`))
			if !strings.Contains(cls, " down") || strings.Contains(cls, "enabled") {
				t.Errorf("the route picture's %s box is %q, want down, not enabled", kind, cls)
			}
		}
	})

	t.Run("item7-reason-first", func(t *testing.T) {
		step(t, ctx, "open search's page", 60*time.Second,
			chromedp.Evaluate[chromedp.Void](`location.hash = '#router/search@file'; undefined`),
			shown(chromedp.CSS(`#detail-body .flow a.box[data-server] .berr`)))
		lines := value(t, ctx, "read the server box", 60*time.Second, chromedp.Evaluate[[]string](
			`(() => { const b = document.querySelector('#detail-body .flow a.box[data-server]');
			  const r = b.querySelector('.berr'); const u = b.querySelector('.errurl');
			  return [r.textContent, r.title, u ? u.textContent : '', String(r.getBoundingClientRect().top < (u ? u.getBoundingClientRect().top : 1e9))] })()`))
		if lines[0] != "connection refused" {
			t.Errorf("the server box's reason reads %q, want %q first", lines[0], "connection refused")
		}
		if !strings.Contains(lines[1], "health check") || !strings.Contains(lines[1], "connection refused") || !strings.Contains(lines[1], dead) {
			t.Errorf("hovering shows %q, want the whole error", lines[1])
		}
		if !strings.Contains(lines[2], dead+"/health") || lines[3] != "true" {
			t.Errorf("the URL line reads %q (below the reason: %s), want the checked URL under the reason", lines[2], lines[3])
		}
		why := textOf(t, ctx, "read why", `#detail-body ul.why`, "innerText")
		if !strings.Contains(why, "DOWN: connection refused") {
			t.Errorf("the router page's why reads %q", why)
		}
		shot(t, ctx, "why-router-search.png")
	})

	t.Run("item6-which-server-fails", func(t *testing.T) {
		step(t, ctx, "open pay's page", 60*time.Second,
			chromedp.Evaluate[chromedp.Void](`location.hash = '#router/pay@file'; undefined`),
			shown(chromedp.CSS(`#detail-body table.servers tr[data-row-server="`+bad.URL()+`"] td.share.err`)))
		row := func(url string) []string {
			return value(t, ctx, "read a server row", 60*time.Second, chromedp.Evaluate[[]string](
				`[...document.querySelectorAll('#detail-body table.servers tr[data-row-server="`+url+`"] td')].map(td => td.textContent)`))
		}
		b, a := row(bad.URL()), row(good.URL())
		t.Logf("servers: %v / %v", b, a)
		if len(b) < 6 || b[4] != "100%" || b[3] == "0.0" {
			t.Errorf("failing server row %v, want traffic and a 100%% 5xx share", b)
		}
		if len(a) < 6 || a[4] != "0%" || a[3] == "0.0" {
			t.Errorf("healthy server row %v, want traffic and 0%% 5xx", a)
		}
		box := textOf(t, ctx, "read the failing server's box", `#detail-body .flow a.box[data-server="`+bad.URL()+`"].failing .traffic`, "textContent")
		if !strings.Contains(box, "5xx 100%") || !strings.Contains(box, "req/s") || !strings.Contains(box, "p99") {
			t.Errorf("the failing server's box reads %q, want its rate, 5xx share and latency", box)
		}
		if n := value(t, ctx, "count failing boxes", 60*time.Second, chromedp.Evaluate[int](`document.querySelectorAll('#detail-body .flow a.box.failing').length`)); n != 1 {
			t.Errorf("%d server boxes marked failing, want exactly the one answering 500", n)
		}
		shot(t, ctx, "why-router-pay.png")
		step(t, ctx, "open pay's service page", 60*time.Second,
			chromedp.Evaluate[chromedp.Void](`location.hash = '#service/pay@file'; undefined`),
			shown(chromedp.CSS(`#detail-body table.servers tr[data-row-server="`+bad.URL()+`"] td.share.err`)))
		shot(t, ctx, "why-service-pay.png")
		step(t, ctx, "the overview names the server", 60*time.Second,
			chromedp.Evaluate[chromedp.Void](`location.hash = '#overview'; undefined`),
			shown(chromedp.CSS(`#failing li[data-router="pay@file"]`)))
		txt := textOf(t, ctx, "read pay's entry", `#failing li[data-router="pay@file"]`, "innerText")
		if !strings.Contains(txt, "server "+bad.URL()+" answers 100% 5xx") || strings.Contains(txt, good.URL()) {
			t.Errorf("Failing now reads %q, want the server answering 5xx named, not the healthy one", txt)
		}
		shot(t, ctx, "why-overview-failing.png")
	})
}
