package dashboard

import (
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestRouterTLSPanelAndTCPTables is issue 28 item 10 through the binary:
// an HTTPS router's page has a TLS panel (no resolver, its domain, the
// file certificate actually served with its expiry in two days, the TLS
// options "modern" with TLS 1.3); the TCP/UDP tab lists services and
// middlewares like the HTTP tabs; a TCP service's page shows the live
// counters of the routers using it (a held connection appears without a
// reload).
func TestRouterTLSPanelAndTCPTables(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	certFile, keyFile := writeIssuedCert(t, t.TempDir(), "shop.example", "Shop Test CA", 47*time.Hour)
	backend, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backend.Close() })
	go func() {
		for {
			c, err := backend.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	web := harness.StartWhoamiProc(t, "shop")
	harness.WriteFile(t, dir, "dynamic.yml", fmt.Sprintf(`http:
  routers:
    shop:
      entryPoints: [websecure]
      rule: Host(`+"`shop.example`"+`)
      service: shop
      tls:
        options: modern
  services:
    shop:
      loadBalancer:
        servers: [{url: %q}]
tls:
  certificates:
    - certFile: %q
      keyFile: %q
  options:
    modern:
      minVersion: VersionTLS13
      sniStrict: true
tcp:
  routers:
    db:
      entryPoints: [db]
      rule: HostSNI(`+"`*`"+`)
      middlewares: [lan]
      service: pg
  services:
    pg:
      loadBalancer:
        servers: [{address: %q}]
  middlewares:
    lan:
      ipAllowList:
        sourceRange: [127.0.0.1/32]
`, web.URL(), certFile, keyFile, backend.Addr().String()))
	dbEP := harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`entryPoints:
  traefik:
    address: %q
  websecure:
    address: %q
  db:
    address: %q
api:
  insecure: true
providers:
  providersThrottleDuration: 50ms
  file:
    directory: %q
`, harness.FreeAddr(t), harness.FreeAddr(t), dbEP, dir))
	admin := g.URL(t, "traefik", "")
	harness.TryGet(t, 60*time.Second, admin+"/api/tcp/routers", harness.StatusIs(200), harness.BodyContains(`"name":"db@file"`))

	step(t, ctx, "open the HTTPS router's page", 30*time.Second,
		chromedp.Navigate(admin+"/dashboard/#router/shop@file"),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`#detail-body .tlspanel[data-loaded="true"]`)))
	// The page is drawn again on every configuration reload; the rows are
	// read from a filled panel in one evaluation, polled until one is there.
	var rows map[string]string
	for deadline := time.Now().Add(30 * time.Second); len(rows) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		rows = value(t, ctx, "read the TLS panel", 60*time.Second, chromedp.Evaluate[map[string]string](
			`Object.fromEntries([...document.querySelectorAll('#detail-body .tlspanel[data-loaded="true"] tr')].map(r => [r.dataset.tls, r.querySelector('td').innerText]))`))
	}
	t.Logf("TLS panel: %v", rows)
	for k, want := range map[string][]string{
		"Resolver":           {"none"},
		"Domains":            {"shop.example"},
		"Certificate served": {"shop.example", "Shop Test CA", "tls section"},
		"Expires":            {"in 1 day 22 h"},
		"TLS options":        {"modern", "VersionTLS13", "sniStrict"},
	} {
		for _, w := range want {
			if !strings.Contains(rows[k], w) {
				t.Errorf("TLS panel %s reads %q, want %q in it", k, rows[k], w)
			}
		}
	}
	shot(t, ctx, "router-tls-panel.png")

	step(t, ctx, "open the TCP/UDP tab", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#tcpudp'; undefined`),
		shown(chromedp.CSS(`#tcp-services tr[data-name="pg@file"]`)),
		shown(chromedp.CSS(`#tcp-middlewares tr[data-name="lan@file"]`)))
	svc := textOf(t, ctx, "read the TCP service row", `#tcp-services tr[data-name="pg@file"]`, "innerText")
	if !strings.Contains(svc, "enabled") || !strings.Contains(svc, backend.Addr().String()) || !strings.Contains(svc, "db@file") {
		t.Errorf("TCP service row %q, want its status, server and router", svc)
	}
	if mw := textOf(t, ctx, "read the TCP middleware row", `#tcp-middlewares tr[data-name="lan@file"]`, "innerText"); !strings.Contains(mw, "ipallowlist") || !strings.Contains(mw, "db@file") {
		t.Errorf("TCP middleware row %q, want its type and router", mw)
	}
	shot(t, ctx, "tcpudp-tables.png")

	step(t, ctx, "open the TCP service's page", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#tcpservice/pg@file'; undefined`),
		shown(chromedp.CSS(`#detail-body table.counters`)))
	conn, err := net.Dial("tcp", dbEP)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	step(t, ctx, "see the open connection on the service page without a reload", 60*time.Second,
		chromedp.Poll[chromedp.Void](`(() => { const c = document.querySelector('#detail-body table.counters td.open'); return c && c.innerText === '1' })()`))
	shot(t, ctx, "tcp-service-counters.png")
}
