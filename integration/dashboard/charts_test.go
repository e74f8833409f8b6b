package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// load sends rate requests per second to url with Host host for d, paced
// by the clock (a late request is sent at once, not skipped), one at a
// time. It returns how many got 200.
func load(t *testing.T, url, host string, rate int, d time.Duration) int {
	t.Helper()
	ok, _ := loadTimed(t, url, host, rate, d)
	return ok
}

// loadTimed is load, also returning when each answered request finished
// (Unix milliseconds), so a chart can be compared with what was really
// sent: on a busy machine the client itself stalls and catches up, which
// a correct chart shows as a dip and a burst.
func loadTimed(t *testing.T, url, host string, rate int, d time.Duration) (int, []int64) {
	t.Helper()
	var done []int64
	client := &http.Client{Timeout: 5 * time.Second}
	n := int(d.Seconds()) * rate
	start := time.Now()
	ok := 0
	for i := range n {
		if wait := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); wait > 0 {
			time.Sleep(wait)
		}
		req, _ := http.NewRequest("GET", url, nil)
		req.Host = host
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		done = append(done, time.Now().UnixMilli())
		if resp.StatusCode == 200 {
			ok++
		}
	}
	return ok, done
}

// waitSampledAfter waits until the page's chart has a sample taken two
// intervals after at (Unix milliseconds; the last answer of a load): every
// request answered by then has been counted (after its response was
// written) and pushed to the page. On a loaded machine that can take longer
// than the two seconds it takes on an idle one.
func waitSampledAfter(t *testing.T, ctx context.Context, chart string, at int64) {
	t.Helper()
	var last float64
	harness.Try(t, 60*time.Second, func() error {
		last = value(t, ctx, "read the "+chart+" chart's last sample time", 30*time.Second, chromedp.Evaluate[float64](
			`(() => { const t = window.gantryCharts['`+chart+`'].t; return t.length ? t[t.length - 1] : 0; })()`))
		if int64(last) < at+2000 {
			return fmt.Errorf("chart %s: last sample at %.0f, want one after %d", chart, last, at+2000)
		}
		return nil
	})
}

// TestOverviewChartFollowsLoad: 500 requests paced at 50 per second are
// plotted by the overview chart (the page's own samples, pushed over the
// WebSocket each second) as what was answered in each sample's interval,
// adding up to 500, and the plotted polyline has one point per sample. The
// client's own pace is not asserted: on a busy machine it stalls and
// catches up, and the chart must show that.
func TestOverviewChartFollowsLoad(t *testing.T) {
	ctx := browser(t)
	e := start(t, "load")
	step(t, ctx, "open the overview", 30*time.Second,
		chromedp.Navigate(e.admin+"/dashboard/#overview"),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`[data-charts="overview"][data-loaded="true"] figure.chart svg`)),
	)
	var before int
	for deadline := time.Now().Add(60 * time.Second); before < 2 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		// Two samples before the load: the one just before it starts the
		// first interval of the load.
		before = value(t, ctx, "count samples", 60*time.Second, chromedp.Evaluate[int](`window.gantryCharts['overview-rates'].t.length`))
	}
	got, sent := loadTimed(t, e.g.URL(t, "web", "/"), "load.example", 50, 10*time.Second)
	if got != 500 {
		t.Fatalf("load: %d of 500 requests answered 200", got)
	}
	waitSampledAfter(t, ctx, "overview-rates", sent[len(sent)-1])
	from := before - 1 // the last sample before the load: the first interval's start
	data := value(t, ctx, "read the chart's data", 60*time.Second,
		chromedp.Evaluate[[][]float64](`[window.gantryCharts['overview-rates'].t.slice(`+fmt.Sprint(from)+`), window.gantryCharts['overview-rates'].rps.slice(`+fmt.Sprint(from)+`)]`))
	if len(data[0]) < 2 {
		t.Fatalf("chart data %v: no samples since the load began", data)
	}
	rps := data[1][1:]
	var counted float64 // rate × interval: the requests each sample covers
	for i := range rps {
		counted += rps[i] * (data[0][i+1] - data[0][i]) / 1000
	}
	var busy []float64
	for _, v := range rps {
		if v > 0 {
			busy = append(busy, v)
		}
	}
	t.Logf("plotted requests/s since the load began: %v (before: %v, from index %d of %d)", rps, data[1][0], from, before)
	if len(busy) < 10 {
		t.Fatalf("chart shows %d seconds with traffic, want at least 10: %v", len(busy), rps)
	}
	// Sample by sample, what the chart has plotted so far (rate × interval,
	// summed) follows what the client had been answered by the end of that
	// sample, within 5 requests: a response counted by gantry just before
	// a sample boundary reaches the client just after it, so one boundary
	// can be off by a few, but the sum never drifts (a lost, doubled or
	// misplaced sample is off by a whole second of load, about 50).
	var plotted float64
	for i := range rps {
		plotted += rps[i] * (data[0][i+1] - data[0][i]) / 1000
		to := int64(data[0][i+1])
		n := 0
		for _, at := range sent {
			if at <= to {
				n++
			}
		}
		if d := plotted - float64(n); d < -5 || d > 5 {
			t.Errorf("by the sample ending %d the chart counts %.0f requests, but %d were answered by then (all: %v)", to, plotted, n, busy)
		}
	}
	if counted < 490 || counted > 510 {
		t.Errorf("the samples (rate × interval) add up to %.0f requests, want 500", counted)
	}

	points := value(t, ctx, "count plotted points", 60*time.Second, chromedp.Evaluate[[]int](`[
		document.querySelector('[data-charts="overview"] polyline[data-line="rps"]').getAttribute('points').trim().split(/\s+/).length,
		window.gantryCharts['overview-rates'].t.length]`))
	if points[0] != points[1] {
		t.Errorf("the polyline has %d points for %d samples", points[0], points[1])
	}
	shot(t, ctx, "overview-chart-load.png")
}

// shopConfig is a router with two middlewares in front of a weighted
// service of two load-balanced services, each with one health-checked
// server.
func shopConfig(blue, green string) string {
	return fmt.Sprintf(`http:
  routers:
    shop:
      entryPoints: [web]
      rule: Host(`+"`shop.example`"+`)
      middlewares: [strip, tag]
      service: split
  middlewares:
    strip:
      stripPrefix:
        prefixes: [/shop]
    tag:
      headers:
        customRequestHeaders:
          X-Shop: "1"
  services:
    split:
      weighted:
        services:
          - name: blue
            weight: 3
          - name: green
            weight: 1
    blue:
      loadBalancer:
        healthCheck: {path: /health, interval: 200ms, timeout: 1s}
        servers:
          - url: "%s"
    green:
      loadBalancer:
        healthCheck: {path: /health, interval: 200ms, timeout: 1s}
        servers:
          - url: "%s"
`, blue, green)
}

// boxes lists the route picture's boxes in document order as "kind name
// classes".
func boxes(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return value(t, ctx, "list the boxes", 60*time.Second, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#detail-body .flow a.box')].map(b => b.dataset.kind + ' ' + b.dataset.name + ' ' + b.className + ' ' + b.getAttribute('href'))`))
}

// TestRouterPageDrawsTheRoute opens the page of a router with two
// middlewares and a weighted service: every box is drawn, in order, each
// linking to its page; then one server stops and its box turns red
// without a reload, and the overview names the router as failing.
func TestRouterPageDrawsTheRoute(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	blue := harness.StartWhoamiProc(t, "blue")
	green := harness.StartWhoamiProc(t, "green")
	harness.WriteFile(t, dir, "dynamic.yml", shopConfig(blue.URL(), green.URL()))
	g := harness.Start(t, staticConfig(harness.FreeAddr(t), harness.FreeAddr(t), dir))
	e := &env{g: g, dir: dir, admin: g.URL(t, "traefik", "")}
	e.waitRouters(t, "shop")
	harness.TryGet(t, 60*time.Second, g.URL(t, "web", "/shop/"), harness.Host("shop.example"), harness.StatusIs(200))
	if n := load(t, g.URL(t, "web", "/shop/"), "shop.example", 20, 3*time.Second); n != 60 {
		t.Fatalf("load: %d of 60 answered 200", n)
	}

	step(t, ctx, "open the router's page", 30*time.Second,
		chromedp.Navigate(e.admin+"/dashboard/#router/shop@file"),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`#detail-body .flow a.box[data-kind="server"][data-server="`+green.URL()+`"].up`)),
		shown(chromedp.CSS(`#detail-body [data-charts="router"][data-loaded="true"]`)),
	)
	if busy := value(t, ctx, "read the router's chart", 60*time.Second, chromedp.Evaluate[float64](
		`window.gantryCharts['router-rates'].rps.reduce((a, v) => a + v, 0)`)); busy < 45 || busy > 80 {
		t.Errorf("the router's chart adds up to %.0f requests, want about 60", busy)
	}
	got := boxes(t, ctx)
	want := []string{
		"entrypoint web", "router shop@file", "middleware strip@file", "middleware tag@file",
		"service split@file", "service blue@file", "server " + blue.URL(), "service green@file", "server " + green.URL(),
	}
	if len(got) != len(want) {
		t.Fatalf("route picture boxes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	hrefs := map[string]string{"entrypoint": "#entrypoint/", "router": "#router/", "middleware": "#middleware/", "service": "#service/", "server": "#service/"}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w+" ") {
			t.Errorf("box %d is %q, want %q", i, got[i], w)
		}
		kind := strings.Fields(w)[0]
		if !strings.Contains(got[i], " "+hrefs[kind]) {
			t.Errorf("box %q does not link to a %s page", got[i], hrefs[kind])
		}
		if strings.Contains(got[i], " down") || strings.Contains(got[i], " disabled") {
			t.Errorf("box %q is red before anything failed", got[i])
		}
	}
	for _, lbl := range []string{"weight 3", "weight 1"} {
		if !strings.Contains(textOf(t, ctx, "read the picture", `#detail-body .flow`, "innerText"), lbl) {
			t.Errorf("picture lacks %q", lbl)
		}
	}
	shot(t, ctx, "router-page.png")

	step(t, ctx, "mark the page", 60*time.Second, chromedp.Evaluate[chromedp.Void](`window.gantryNoReload = 42; undefined`))
	green.Stop(t)
	step(t, ctx, "see green's server box turn red", 60*time.Second,
		shown(chromedp.CSS(`#detail-body .flow a.box[data-server="`+green.URL()+`"].down`)))
	if marker := value(t, ctx, "read the marker", 60*time.Second, chromedp.Evaluate[int](`window.gantryNoReload || 0`)); marker != 42 {
		t.Errorf("the page was reloaded (marker %d): the server's state must arrive over the WebSocket", marker)
	}
	colour := value(t, ctx, "read the box colour", 60*time.Second, chromedp.Evaluate[string](
		`getComputedStyle(document.querySelector('#detail-body a.box[data-server="`+green.URL()+`"]')).borderTopColor`))
	if colour != "rgb(198, 40, 40)" { // --err
		t.Errorf("down server's box border is %s, want red rgb(198, 40, 40)", colour)
	}
	if still := boxes(t, ctx); strings.Contains(strings.Join(still, "\n"), blue.URL()+" box server down") {
		t.Errorf("blue's server turned red too: %v", still)
	}
	shot(t, ctx, "router-page-server-down.png")

	step(t, ctx, "the overview names the failing router", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#overview'; undefined`),
		shown(chromedp.CSS(`#failing li[data-router="shop@file"]`)))
	why := textOf(t, ctx, "read why", `#failing li[data-router="shop@file"]`, "innerText")
	if !strings.Contains(why, green.URL()) || !strings.Contains(why, "DOWN") {
		t.Errorf("failing entry %q does not name the down server", why)
	}
	shot(t, ctx, "overview-failing.png")
}

// TestProblemsPage: problems are grouped by provider and source with the
// count in the header badge on every page; with none, the page says so.
func TestProblemsPage(t *testing.T) {
	ctx := browser(t)
	e := start(t, "fine")
	step(t, ctx, "open the problems page", 30*time.Second,
		chromedp.Navigate(e.admin+"/dashboard/#problems"),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`#problem-groups .empty`)))
	if s := textOf(t, ctx, "read the empty state", `#problem-groups`, "innerText"); s != "no problems" {
		t.Errorf("empty problems page says %q", s)
	}
	bad := strings.Replace(dynamicConfig(e.backend, "fine"), "  routers:\n", "  routers:\n    bad:\n      rule: Host(`bad.example`\n      service: whoami\n    lost:\n      rule: Host(`lost.example`)\n      service: missing\n", 1)
	bad = strings.Replace(bad, "Host(`fine.example`)", "Host(`fine.example`) || Host(`www.fine.example`)", 1)
	harness.WriteFile(t, e.dir, "dynamic.yml", bad)
	step(t, ctx, "see the problems grouped", 60*time.Second,
		shown(chromedp.CSS(`#problem-groups .pgroup[data-provider="file"]`)))
	// Badge and list in one evaluation (both are drawn from one read),
	// until they show both problems: a page that stays wrong fails.
	var badge string
	var n int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got := value(t, ctx, "read the badge and count the problems", 60*time.Second, chromedp.Evaluate[[]string](
			`[document.getElementById('problem-badge').innerText.trim(), String(document.querySelectorAll('#problem-groups li').length)]`))
		badge = got[0]
		n, _ = strconv.Atoi(got[1])
		if (badge == fmt.Sprint(n) && n >= 2) || time.Now().After(deadline) {
			break
		}
	}
	if badge != fmt.Sprint(n) || n < 2 {
		t.Errorf("badge %q, %d problems listed (want the same, at least 2)", badge, n)
	}
	sources := value(t, ctx, "list sources", 60*time.Second, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#problem-groups .psource')].map(s => s.dataset.source)`))
	if !sort.StringsAreSorted(sources) || len(sources) == 0 {
		t.Errorf("sources %v, want sorted and not empty", sources)
	}
	for _, page := range []string{"routers", "revisions"} {
		step(t, ctx, "show "+page, 60*time.Second, chromedp.Evaluate[chromedp.Void](`location.hash = '#`+page+`'; undefined`), shown(chromedp.CSS(`#`+page+`.active`)))
		if b := textOf(t, ctx, "read the badge on "+page, `#problem-badge`, "innerText"); b != badge {
			t.Errorf("badge on %s reads %q, want %q", page, b, badge)
		}
	}
	step(t, ctx, "back to problems", 60*time.Second, chromedp.Evaluate[chromedp.Void](`location.hash = '#problems'; undefined`), shown(chromedp.CSS(`#problems.active`)))
	shot(t, ctx, "problems.png")

	step(t, ctx, "compare the two revisions", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#revisions'; undefined`),
		shown(chromedp.CSS(`#revisions tbody tr:nth-child(2) input[name=rev-a]`)),
		chromedp.Click(chromedp.CSS(`#diff-btn`)),
		shown(chromedp.CSS(`#diff-table .dblock`)))
	diff := textOf(t, ctx, "read the diff", `#diff-table`, "innerText")
	for _, w := range []string{
		"added http routers lost@file", "by file", `+   "service": "missing@file"`,
		"changed http routers fine@file", "-   \"rule\": \"Host(`fine.example`)\",", "+   \"rule\": \"Host(`fine.example`) || Host(`www.fine.example`)\",",
	} {
		if !strings.Contains(diff, w) {
			t.Errorf("diff lacks %q:\n%s", w, diff)
		}
	}
	shot(t, ctx, "revisions-diff.png")
}

// TestOverviewTellsWhichRouterFails is the ten-second test: with a
// healthy router, one whose backend answers 500, one whose only server is
// down and one disabled by a missing middleware, the overview's "Failing
// now" names exactly the three failing routers, each with why, worst
// first.
func TestOverviewTellsWhichRouterFails(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	good := harness.StartWhoamiProc(t, "shop")
	bad := harness.StartWhoamiProc(t, "payments")
	setHealth(t, bad.URL(), 500) // its /health answers 500: the payments traffic below
	harness.WriteFile(t, dir, "dynamic.yml", fmt.Sprintf(`http:
  routers:
    shop:
      entryPoints: [web]
      rule: Host(`+"`shop.example`"+`)
      service: shop
    payments:
      entryPoints: [web]
      rule: Host(`+"`pay.example`"+`)
      service: payments
    search:
      entryPoints: [web]
      rule: Host(`+"`search.example`"+`)
      service: search
    admin:
      entryPoints: [web]
      rule: Host(`+"`admin.example`"+`)
      middlewares: [sso]
      service: shop
  services:
    shop:
      loadBalancer:
        servers: [{url: "%s"}]
    payments:
      loadBalancer:
        servers: [{url: "%s"}]
    search:
      loadBalancer:
        healthCheck: {path: /health, interval: 200ms, timeout: 500ms}
        servers: [{url: "http://%s"}]
`, good.URL(), bad.URL(), harness.DeadAddr(t)))
	g := harness.Start(t, staticConfig(harness.FreeAddr(t), harness.FreeAddr(t), dir))
	e := &env{g: g, dir: dir, admin: g.URL(t, "traefik", "")}
	e.waitRouters(t, "shop", "payments", "search", "admin")
	step(t, ctx, "open the overview", 30*time.Second,
		chromedp.Navigate(e.admin+"/dashboard/#overview"),
		shown(chromedp.CSS(`#live.on`)))
	done := make(chan struct{})
	go func() {
		defer close(done)
		client := &http.Client{Timeout: 2 * time.Second}
		for i := range 120 { // 6 s at 20 req/s, alternating
			host, path := "shop.example", "/"
			if i%2 == 1 {
				host, path = "pay.example", "/health"
			}
			req, _ := http.NewRequest("GET", g.URL(t, "web", path), nil)
			req.Host = host
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	<-done
	step(t, ctx, "see the failing routers", 60*time.Second,
		shown(chromedp.CSS(`#failing li[data-router="payments@file"]`)),
		shown(chromedp.CSS(`#failing li[data-router="search@file"]`)),
		shown(chromedp.CSS(`#failing li[data-router="admin@file"]`)))
	items := value(t, ctx, "list the failing routers", 60*time.Second, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#failing li')].map(li => li.dataset.router + ' | ' + li.innerText)`))
	t.Logf("failing now:\n%s", strings.Join(items, "\n"))
	if len(items) != 3 {
		t.Fatalf("failing list has %d entries, want 3 (shop is healthy): %v", len(items), items)
	}
	if !strings.HasPrefix(items[0], "admin@file |") {
		t.Errorf("the disabled router is not first: %v", items)
	}
	for _, w := range []struct{ router, why string }{
		{"admin@file", `disabled: middleware "sso@file" does not exist`},
		{"search@file", "DOWN: connection refused"},
		{"payments@file", "100% of responses are 5xx"},
	} {
		if !slices.ContainsFunc(items, func(it string) bool { return strings.HasPrefix(it, w.router+" |") && strings.Contains(it, w.why) }) {
			t.Errorf("no failing entry for %s saying %q: %v", w.router, w.why, items)
		}
	}
	shot(t, ctx, "overview-ten-seconds.png")
}
