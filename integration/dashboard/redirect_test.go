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
// redirects to websecure, and 40 redirected requests are counted by the
// router's chart and the overview's. Screenshots: redirect-routers.png,
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
		chromedp.WaitVisible(chromedp.CSS(`#live.on`)),
		chromedp.WaitVisible(chromedp.CSS(`#routers tbody tr[data-name="`+redirect+`"]`)),
	)
	if row := textOf(t, ctx, "read the redirect router's row", `#routers tbody tr[data-name="`+redirect+`"]`, "innerText"); !strings.Contains(row, mw) || !strings.Contains(row, "web") {
		t.Errorf("redirect router row %q, want entrypoint web and middleware %s", row, mw)
	}
	shot(t, ctx, "redirect-routers.png")
	step(t, ctx, "open the middlewares page", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#middlewares'; undefined`),
		chromedp.WaitVisible(chromedp.CSS(`#middlewares tbody tr[data-name="`+mw+`"]`)))
	if row := textOf(t, ctx, "read the middleware's row", `#middlewares tbody tr[data-name="`+mw+`"]`, "innerText"); !strings.Contains(row, "redirectscheme") || !strings.Contains(row, redirect) {
		t.Errorf("redirect middleware row %q, want redirectscheme used by %s", row, redirect)
	}
	step(t, ctx, "open the web entrypoint's page", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#entrypoint/web'; undefined`),
		chromedp.WaitVisible(chromedp.CSS(`#detail-body .redirects`)))
	if p := textOf(t, ctx, "read the redirection", `#detail-body .redirects`, "innerText"); !strings.Contains(p, "websecure") || !strings.Contains(p, "https") {
		t.Errorf("entrypoint web says %q, want it redirects to websecure (https)", p)
	}

	step(t, ctx, "open the redirect router's page", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#router/`+redirect+`'; undefined`),
		chromedp.WaitVisible(chromedp.CSS(`#detail-body .flow a.box.redirect`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-charts="router"][data-loaded="true"] figure.chart svg`)),
	)
	box := textOf(t, ctx, "read the redirect box", `#detail-body .flow a.box.redirect`, "innerText")
	if !strings.Contains(box, "https") || !strings.Contains(box, securePort) || !strings.Contains(box, "301") {
		t.Errorf("redirect box %q, want https, port %s and 301", box, securePort)
	}
	if n := value(t, ctx, "count red boxes", 60*time.Second, chromedp.Evaluate[int](`document.querySelectorAll('#detail-body .flow a.box.disabled').length`)); n != 0 {
		t.Errorf("the redirect's route picture has %d red boxes", n)
	}
	// The requests the charts' series hold (/api/series, what each chart is
	// loaded from): before the load, then after it.
	series := func(q string) float64 {
		resp, err := http.Get(admin + "/api/series?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var s struct {
			RPS    []float64 `json:"rps"`
			StepMs float64   `json:"stepMs"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
			t.Fatal(err)
		}
		n := 0.0
		for _, r := range s.RPS {
			n += r * s.StepMs / 1000
		}
		return n
	}
	routerQ := "router=" + url.QueryEscape(redirect)
	before := [2]float64{series(routerQ), series("")}
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
	var got [2]float64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		got = [2]float64{series(routerQ) - before[0], series("") - before[1]}
		if got[0] >= 39.5 && got[1] >= 39.5 {
			break
		}
	}
	if got[0] < 39.5 || got[0] > 40.5 {
		t.Errorf("the redirect router's series counts %.1f requests, want the 40 redirected", got[0])
	}
	if got[1] < 39.5 { // the total also holds the page's own earlier requests sampled late
		t.Errorf("the overview's series counts %.1f requests, want at least the 40 redirected", got[1])
	}
	shot(t, ctx, "redirect-router.png")
}
