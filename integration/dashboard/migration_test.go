package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestMigrationPage: with providers.kubernetesIngressNGINX watching a real
// API server, the dashboard's ingress-nginx tab shows the migration
// report: the totals, one table per Ingress with each annotation exact,
// approximated or refused, and a refused snippet making its Ingress
// "denied". A new Ingress appears without reloading the page. Screenshot:
// migration.png. Without the provider there is no tab
// (TestDashboardInBrowser's instance).
func TestMigrationPage(t *testing.T) {
	k := harness.StartKube(t)
	ns := k.Namespace(t, "dash")
	k.WriteService(t, ns, "app", nil, harness.ServicePort{Name: "http", Port: 80})
	ingress := func(name, host string, ann ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %q\n  namespace: %q\n  annotations:\n    kubernetes.io/ingress.class: nginx\n", name, ns)
		for i := 0; i+1 < len(ann); i += 2 {
			fmt.Fprintf(&b, "    nginx.ingress.kubernetes.io/%s: %q\n", ann[i], ann[i+1])
		}
		fmt.Fprintf(&b, "spec:\n  rules:\n  - host: %s\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}\n", host)
		return b.String()
	}
	k.Apply(t, ingress("shop", "shop.test", "rewrite-target", "/", "limit-rps", "10"))
	k.Apply(t, ingress("legacy", "legacy.test", "server-snippet", "listen 8080;"))
	ctx := browser(t)
	g := harness.Start(t, fmt.Sprintf(`entryPoints:
  web: {address: %q}
  websecure: {address: %q}
  traefik: {address: %q}
api: {insecure: true}
providers:
  kubernetesIngressNGINX:
    endpoint: %q
    token: %q
    certAuthFilePath: %q
`, harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t), k.URL, k.Token, k.CAFile))
	admin := g.URL(t, "traefik", "")
	harness.TryGet(t, 30*time.Second, admin+"/api/kubernetes/ingress-nginx/migration", harness.StatusIs(200), harness.BodyContains(`"name":"legacy"`))
	step(t, ctx, "open the ingress-nginx tab", 30*time.Second,
		chromedp.Navigate(admin+"/dashboard/#migration"),
		shown(chromedp.CSS(`#migration-tab`)),
		shown(chromedp.CSS(`.migration-ingress[data-ingress="`+ns+`/shop"] tr[data-annotation="rewrite-target"][data-support="exact"]`)),
		shown(chromedp.CSS(`.migration-ingress[data-ingress="`+ns+`/shop"] tr[data-annotation="limit-rps"][data-support="approximated"]`)),
		shown(chromedp.CSS(`.migration-ingress[data-ingress="`+ns+`/legacy"][data-status="denied"] tr[data-annotation="server-snippet"][data-support="refused"]`)),
	)
	summary := textOf(t, ctx, "read the totals", `#migration-state`, "innerText")
	if !strings.Contains(summary, "2 Ingresses: 0 move unchanged, 1 answer 503.") || !strings.Contains(summary, "3 annotations: 1 exact, 1 approximated, 1 refused.") {
		t.Errorf("summary %q", summary)
	}
	how := textOf(t, ctx, "read how limit-rps is served", `.migration-ingress[data-ingress="`+ns+`/shop"] tr[data-annotation="limit-rps"] td:nth-child(4)`, "innerText")
	if !strings.Contains(how, "429") {
		t.Errorf("limit-rps detail %q", how)
	}
	if badge := textOf(t, ctx, "read the badge", `#migration-badge`, "innerText"); badge != "1" {
		t.Errorf("badge %q, want 1 refused", badge)
	}
	shot(t, ctx, "migration.png")
	// A new Ingress shows up while the tab is open.
	k.Apply(t, ingress("plain", "plain.test"))
	step(t, ctx, "see the new Ingress", 60*time.Second,
		shown(chromedp.CSS(`.migration-ingress[data-ingress="`+ns+`/plain"][data-status="served"]`)))
	if s := textOf(t, ctx, "read the totals", `#migration-state`, "innerText"); !strings.Contains(s, "3 Ingresses: 1 move unchanged") {
		t.Errorf("summary after the new Ingress %q", s)
	}
}
