package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestSimulatorShowsWhatApplies is issue 28 item 11 through the binary:
// with a TCP entrypoint "db" (sorting first), web redirecting to
// websecure, and an HTTP router with a middleware on websecure, the
// simulator defaults to the HTTP entrypoint with routers, not db; a plain
// HTTP request on web is won by the redirection router and the picture
// shows its redirect middleware; on websecure the router's middleware and
// service are shown, in order.
func TestSimulatorShowsWhatApplies(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	backend := harness.StartWhoamiProc(t, "app")
	harness.WriteFile(t, dir, "dynamic.yml", fmt.Sprintf(`http:
  routers:
    app:
      entryPoints: [websecure]
      rule: Host(`+"`app.example`"+`)
      middlewares: [tag]
      service: app
      tls: {}
  middlewares:
    tag:
      headers:
        customRequestHeaders: {X-App: "1"}
  services:
    app:
      loadBalancer:
        servers: [{url: "%s"}]
tcp:
  routers:
    pg:
      entryPoints: [db]
      rule: HostSNI(`+"`*`"+`)
      service: pg
  services:
    pg:
      loadBalancer:
        servers: [{address: "127.0.0.1:5432"}]
`, backend.URL()))
	g := harness.Start(t, fmt.Sprintf(`entryPoints:
  db:
    address: "%s"
  web:
    address: "%s"
    http:
      redirections:
        entryPoint:
          to: websecure
          scheme: https
  websecure:
    address: "%s"
  traefik:
    address: "%s"
api:
  insecure: true
  dashboard: true
providers:
  providersThrottleDuration: 50ms
  file:
    directory: "%s"
    watch: true
`, harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t), dir))
	e := &env{g: g, dir: dir, admin: g.URL(t, "traefik", "")}
	e.waitRouters(t, "app")

	step(t, ctx, "open the simulator", 30*time.Second,
		chromedp.Navigate(e.admin+"/dashboard/#simulator"),
		shown(chromedp.CSS(`#live.on`)),
		chromedp.WaitReady(chromedp.CSS(`#sim-ep option[value="db"]`)),
		shown(chromedp.CSS(`#sim-form`)))
	// The default is chosen once the routers are known.
	var def string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if def = value(t, ctx, "read the default entrypoint", 60*time.Second, chromedp.Evaluate[string](`document.getElementById('sim-ep').value`)); def == "websecure" {
			break
		}
	}
	if def != "websecure" {
		t.Errorf("the simulator defaults to entrypoint %q, want websecure (the HTTP one with routers; db is TCP)", def)
	}

	run := func(ep, url string) {
		t.Helper()
		step(t, ctx, "simulate "+url+" on "+ep, 60*time.Second,
			chromedp.SetValue(chromedp.CSS(`#sim-ep`), ep),
			chromedp.SetValue(chromedp.CSS(`#sim-url`), url),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('sim-result').replaceChildren(); undefined`),
			chromedp.Click(chromedp.CSS(`#sim-run`)),
			shown(chromedp.CSS(`#sim-result .winner`)))
	}
	kinds := func() []string {
		return value(t, ctx, "list what applies", 60*time.Second, chromedp.Evaluate[[]string](
			`[...document.querySelectorAll('#sim-result .sim-applied .flow a.box')].map(b => b.dataset.kind + ' ' + b.dataset.name)`))
	}

	run("web", "http://app.example/cart")
	if w := textOf(t, ctx, "read the winner", `#sim-result .winner strong`, "innerText"); w != "web-to-websecure@internal" {
		t.Errorf("a plain HTTP request on web is won by %q, want the redirection router web-to-websecure@internal", w)
	}
	got := strings.Join(kinds(), "\n")
	for _, w := range []string{"entrypoint web", "router web-to-websecure@internal", "middleware redirect-web-to-websecure@internal"} {
		if !strings.Contains(got, w) {
			t.Errorf("what applies on web lacks %q:\n%s", w, got)
		}
	}
	shot(t, ctx, "simulator-redirect.png")

	run("websecure", "https://app.example/cart")
	if w := textOf(t, ctx, "read the winner", `#sim-result .winner strong`, "innerText"); w != "app@file" {
		t.Errorf("winner on websecure %q, want app@file", w)
	}
	want := []string{"entrypoint websecure", "router app@file", "middleware tag@file", "service app@file", "server " + backend.URL()}
	if k := kinds(); strings.Join(k, "\n") != strings.Join(want, "\n") {
		t.Errorf("what applies on websecure:\n%s\nwant:\n%s", strings.Join(k, "\n"), strings.Join(want, "\n"))
	}
	shot(t, ctx, "simulator-router.png")
}
