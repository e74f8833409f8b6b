package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestRedirectedRequestsAreVisible (issue 28 item 1): with
// entryPoints.web.http.redirections, the routers page lists
// web-to-websecure@internal with its middleware, the middlewares page
// lists redirect-web-to-websecure@internal (redirectscheme); the
// router's page draws where it sends requests (https on websecure's port,
// permanent 301) instead of a service, the web entrypoint's page says it
// redirects to websecure, and 40 redirected requests made while the
// router's page is open are counted by its chart (the samples pushed live
// over the WebSocket) and the overview's. Screenshots: redirect-routers.png,
// redirect-router.png.
func TestRedirectedRequestsAreVisible(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	backend := "http://" + harness.StartWhoami(t, "backend-1")
	harness.WriteFile(t, dir, "dynamic.yml", strings.Replace(dynamicConfig(backend, "app"), "entryPoints: [web]", "entryPoints: [websecure]\n      tls: {}", 1))
	secure := harness.FreeAddr(t)
	_, securePort, _ := strings.Cut(secure, ":")
	g := harness.Start(t, fmt.Sprintf(`entryPoints:
  web:
    address: %q
    http: {redirections: {entryPoint: {to: websecure, scheme: https}}}
  websecure:
    address: %q
  traefik:
    address: %q
api:
  insecure: true
providers:
  file:
    directory: %q
`, harness.FreeAddr(t), secure, harness.FreeAddr(t), dir))
	admin := g.URL(t, "traefik", "")
	harness.TryGet(t, 60*time.Second, admin+"/api/http/routers", harness.StatusIs(200), harness.BodyContains(`"name":"app@file"`))
	const redirect, mw = "web-to-websecure@internal", "redirect-web-to-websecure@internal"

	step(t, ctx, "open the routers page", 30*time.Second,
		chromedp.Navigate(admin+"/dashboard/#routers"),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`#routers tbody tr[data-name="`+redirect+`"]`)),
	)
	if row := textOf(t, ctx, "read the redirect router's row", `#routers tbody tr[data-name="`+redirect+`"]`, "innerText"); !strings.Contains(row, mw) || !strings.Contains(row, "web") {
		t.Errorf("redirect router row %q, want entrypoint web and middleware %s", row, mw)
	}
	shot(t, ctx, "redirect-routers.png")
	step(t, ctx, "open the middlewares page", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#middlewares'; undefined`),
		shown(chromedp.CSS(`#middlewares tbody tr[data-name="`+mw+`"]`)))
	if row := textOf(t, ctx, "read the middleware's row", `#middlewares tbody tr[data-name="`+mw+`"]`, "innerText"); !strings.Contains(row, "redirectscheme") || !strings.Contains(row, redirect) {
		t.Errorf("redirect middleware row %q, want redirectscheme used by %s", row, redirect)
	}
	step(t, ctx, "open the web entrypoint's page", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#entrypoint/web'; undefined`),
		shown(chromedp.CSS(`#detail-body .redirects`)))
	if p := textOf(t, ctx, "read the redirection", `#detail-body .redirects`, "innerText"); !strings.Contains(p, "websecure") || !strings.Contains(p, "https") {
		t.Errorf("entrypoint web says %q, want it redirects to websecure (https)", p)
	}

	step(t, ctx, "open the redirect router's page", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#router/`+redirect+`'; undefined`),
		shown(chromedp.CSS(`#detail-body .flow a.box.redirect`)),
		shown(chromedp.CSS(`[data-charts="router"][data-loaded="true"] figure.chart svg`)),
	)
	box := textOf(t, ctx, "read the redirect box", `#detail-body .flow a.box.redirect`, "innerText")
	if !strings.Contains(box, "https") || !strings.Contains(box, securePort) || !strings.Contains(box, "301") {
		t.Errorf("redirect box %q, want https, port %s and 301", box, securePort)
	}
	if n := value(t, ctx, "count red boxes", 60*time.Second, chromedp.Evaluate[int](`document.querySelectorAll('#detail-body .flow a.box.disabled').length`)); n != 0 {
		t.Errorf("the redirect's route picture has %d red boxes", n)
	}
	// The charts hold a sample before the load (the page may open in the
	// process's first second, before the sampler's first sample: requests
	// then would fall into a first sample, whose rate is over no known
	// interval); the requests made after it are counted in the samples
	// pushed live to the open page, and in /api/series (what each chart
	// is loaded from).
	chartEnd, overviewEnd := chartLast(t, ctx, "router-rates"), chartLast(t, ctx, "overview-rates")
	series := func(q string, since float64) float64 {
		resp, err := http.Get(admin + "/api/series?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var s struct {
			T   []float64 `json:"t"`
			RPS []float64 `json:"rps"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
			t.Fatal(err)
		}
		n := 0.0
		for i := 1; i < len(s.T); i++ {
			if s.T[i] > since {
				n += s.RPS[i] * (s.T[i] - s.T[i-1]) / 1000
			}
		}
		return n
	}
	routerQ := "router=" + url.QueryEscape(redirect)
	noRedirect := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i := range 40 {
		req, _ := http.NewRequest("GET", g.URL(t, "web", fmt.Sprintf("/p%d", i)), nil)
		req.Host = "app.example"
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMovedPermanently {
			t.Fatalf("request %d: %d, want 301", i, resp.StatusCode)
		}
	}
	// The open router page's chart grows with the 40 redirects (exactly:
	// nothing else goes through that router); the overview's by at least
	// 40 (the total also holds the page's own API requests).
	if n := chartGrowth(t, ctx, "router-rates", chartEnd, 40); n < 39.5 || n > 40.5 {
		t.Errorf("the open router page's chart counts %.1f requests since the load began, want the 40 redirected", n)
	}
	if n := chartGrowth(t, ctx, "overview-rates", overviewEnd, 40); n < 39.5 {
		t.Errorf("the overview chart counts %.1f requests since the load began, want at least the 40 redirected", n)
	}
	if n := series(routerQ, chartEnd); n < 39.5 || n > 40.5 {
		t.Errorf("the redirect router's series counts %.1f requests, want the 40 redirected", n)
	}
	if n := series("", overviewEnd); n < 39.5 {
		t.Errorf("the overview's series counts %.1f requests, want at least the 40 redirected", n)
	}
	shot(t, ctx, "redirect-router.png")
}
