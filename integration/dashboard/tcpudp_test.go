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

// TestTCPUDPPages: the TCP/UDP tab lists TCP and UDP routers with their
// status (a bad rule disabled, with its error), and a TCP router's page
// draws its route: entrypoint → router → middleware → weighted service →
// child service → server address, each box linking to its page. A
// connection held open through the router shows in its row's Open column
// without a reload, and its total stays once it is closed.
func TestTCPUDPPages(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	backend, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backend.Close() })
	go func() { // holds each connection until the client closes it
		for {
			c, err := backend.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(io.Discard, c) }()
		}
	}()
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
          - address: `+backend.Addr().String()+`
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
	dbEP := harness.FreeAddr(t)
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
`, harness.FreeAddr(t), dbEP, udpEP+"/udp", dir))
	admin := g.URL(t, "traefik", "")
	harness.TryGet(t, 60*time.Second, admin+"/api/tcp/routers", harness.StatusIs(200), harness.BodyContains(`"name":"db@file"`))
	step(t, ctx, "open the TCP/UDP tab", 30*time.Second,
		chromedp.Navigate(admin+"/dashboard/#tcpudp"),
		shown(chromedp.CSS(`#tcp-routers tr[data-name="db@file"]`)),
		shown(chromedp.CSS(`#udp-routers tr[data-name="dns@file"]`)))
	if s := textOf(t, ctx, "read the broken router", `#tcp-routers tr[data-name="broken@file"]`, "innerText"); !strings.Contains(s, "disabled") {
		t.Errorf("broken TCP router row %q, want disabled with its error", s)
	}
	if b := textOf(t, ctx, "read the problem badge", `#problem-badge`, "innerText"); b != "1" {
		t.Errorf("problem badge %q, want 1 (the disabled TCP router)", b)
	}
	conn, err := net.Dial("tcp", dbEP)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	step(t, ctx, "see the open connection without a reload", 60*time.Second,
		shown(chromedp.CSS(`#tcp-routers tr[data-name="db@file"] td.open:not(:empty)`)),
		chromedp.Poll[chromedp.Void](`document.querySelector('#tcp-routers tr[data-name="db@file"] td.open').innerText === '1'`))
	shot(t, ctx, "tcpudp.png")
	conn.Close()
	step(t, ctx, "see it closed, with its bytes", 60*time.Second,
		chromedp.Poll[chromedp.Void](`(() => { const r = document.querySelector('#tcp-routers tr[data-name="db@file"]');
			return r.querySelector('td.open').innerText === '0' && r.querySelector('td.bytes').innerText.startsWith('5 B / 0 B'); })()`))
	step(t, ctx, "open the TCP router's page", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#tcprouter/db@file'; undefined`),
		shown(chromedp.CSS(`#detail-body .flow a.box[data-kind="server"]`)))
	got := boxes(t, ctx)
	want := []string{"entrypoint db", "tcp router db@file", "middleware lan@file", "service split@file", "service pg@file", "server " + backend.Addr().String()}
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
