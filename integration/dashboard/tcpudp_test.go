package dashboard

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestTCPUDPPages: the TCP/UDP tab lists TCP and UDP routers with their
// status (a bad rule disabled, with its error), and a TCP router's page
// draws its route: entrypoint → router → middleware → weighted service →
// child service → server address, each box linking to its page.
func TestTCPUDPPages(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	udpEP := pc.LocalAddr().String()
	pc.Close()
	harness.WriteFile(t, dir, "dynamic.yml", `tcp:
  routers:
    db:
      entryPoints: [db]
      rule: HostSNI(`+"`*`"+`)
      middlewares: [lan]
      service: split
    broken:
      entryPoints: [db]
      rule: HostSNI(`+"`a`, `b`"+`)
      service: pg
  services:
    split:
      weighted:
        services:
          - name: pg
            weight: 2
    pg:
      loadBalancer:
        servers:
          - address: 127.0.0.1:5432
  middlewares:
    lan:
      ipAllowList:
        sourceRange: [127.0.0.1/32]
udp:
  routers:
    dns:
      entryPoints: [dns]
      service: dns
  services:
    dns:
      loadBalancer:
        servers:
          - address: 127.0.0.1:53
`)
	g := harness.Start(t, fmt.Sprintf(`entryPoints:
  traefik:
    address: %q
  db:
    address: %q
  dns:
    address: %q
api:
  insecure: true
providers:
  providersThrottleDuration: 50ms
  file:
    directory: %q
`, harness.FreeAddr(t), harness.FreeAddr(t), udpEP+"/udp", dir))
	admin := g.URL(t, "traefik", "")
	harness.TryGet(t, 15*time.Second, admin+"/api/tcp/routers", harness.StatusIs(200), harness.BodyContains(`"name":"db@file"`))
	step(t, ctx, "open the TCP/UDP tab", 30*time.Second,
		chromedp.Navigate(admin+"/dashboard/#tcpudp"),
		chromedp.WaitVisible(chromedp.CSS(`#tcp-routers tr[data-name="db@file"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#udp-routers tr[data-name="dns@file"]`)))
	if s := textOf(t, ctx, "read the broken router", `#tcp-routers tr[data-name="broken@file"]`, "innerText"); !strings.Contains(s, "disabled") {
		t.Errorf("broken TCP router row %q, want disabled with its error", s)
	}
	if b := textOf(t, ctx, "read the problem badge", `#problem-badge`, "innerText"); b != "1" {
		t.Errorf("problem badge %q, want 1 (the disabled TCP router)", b)
	}
	shot(t, ctx, "tcpudp.png")
	step(t, ctx, "open the TCP router's page", 15*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#tcprouter/db@file'; undefined`),
		chromedp.WaitVisible(chromedp.CSS(`#detail-body .flow a.box[data-kind="server"]`)))
	got := boxes(t, ctx)
	want := []string{"entrypoint db", "tcp router db@file", "middleware lan@file", "service split@file", "service pg@file", "server 127.0.0.1:5432"}
	if len(got) != len(want) {
		t.Fatalf("TCP route boxes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w+" ") {
			t.Errorf("box %d is %q, want %q", i, got[i], w)
		}
	}
	for _, w := range []string{"#tcprouter/db%40file", "#tcpmiddleware/lan%40file", "#tcpservice/split%40file", "#tcpservice/pg%40file"} {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("no box links to %s: %v", w, got)
		}
	}
	shot(t, ctx, "tcp-router-page.png")
}
