package dashboard

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"github.com/gantry-proxy/gantry/dashboard"
	"github.com/gantry-proxy/gantry/integration/harness"
)

const largeRouters = 10000

// largeConfig is largeRouters routers r00000..r09999 (Host(hN.example))
// over 100 services on one backend.
func largeConfig(backend string) string {
	var b strings.Builder
	b.WriteString("http:\n  routers:\n")
	for i := range largeRouters {
		fmt.Fprintf(&b, "    r%05d:\n      entryPoints: [web]\n      rule: Host(`h%d.example`)\n      service: s%02d\n", i, i, i%100)
	}
	b.WriteString("  services:\n")
	for i := range 100 {
		fmt.Fprintf(&b, "    s%02d:\n      loadBalancer:\n        servers:\n          - url: %q\n", i, backend)
	}
	return b.String()
}

// TestLargeConfiguration: with 10 000 routers the routers page shows one
// page of 100 rows and says how many there are (it showed the first 1 000
// and no more), the filter finds the last router, the entrypoint's page
// names 50 routers and how many more, and a stats message on the
// WebSocket carries at most dashboard.MaxStatsObjects routers, the
// watched one among them, with the rest counted as omitted (it carried
// every router that had traffic: 2.3 MB a second at 10 000). Screenshot:
// large-routers.png.
func TestLargeConfiguration(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	backend := "http://" + harness.StartWhoami(t, "backend-1")
	harness.WriteFile(t, dir, "dynamic.yml", largeConfig(backend))
	g := harness.Start(t, staticConfig(harness.FreeAddr(t), harness.FreeAddr(t), dir))
	admin := g.URL(t, "traefik", "")
	last := fmt.Sprintf("r%05d@file", largeRouters-1)
	harness.TryGet(t, 60*time.Second, admin+"/api/http/routers/"+last, harness.StatusIs(200))

	// Traffic on more routers than a stats message carries, and a client
	// watching the last router.
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(admin, "http")+"/api/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.WriteJSON(map[string]dashboard.Watch{"watch": {Routers: []string{last}}}); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(host string) {
		req, _ := http.NewRequest("GET", g.URL(t, "web", "/"), nil)
		req.Host = host
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for i := range 2 * dashboard.MaxStatsObjects {
		get(fmt.Sprintf("h%d.example", i))
	}
	get(fmt.Sprintf("h%d.example", largeRouters-1))
	var m dashboard.WSMessage
	for deadline := time.Now().Add(60 * time.Second); ; {
		_ = ws.SetReadDeadline(deadline)
		m = dashboard.WSMessage{} // a fresh one: decoding into the last one would merge its maps
		if err := ws.ReadJSON(&m); err != nil {
			t.Fatalf("waiting for a stats message with the watched router's request: %v", err)
		}
		if m.Type == "stats" && m.Stats != nil && m.Stats.Routers[last].RequestsPerSecond > 0 {
			break
		}
	}
	if n := len(m.Stats.Routers); n > dashboard.MaxStatsObjects || m.Stats.Omitted == nil || m.Stats.Omitted.Routers == 0 {
		t.Errorf("a stats message carries %d routers (omitted %+v), want at most %d and the rest counted", n, m.Stats.Omitted, dashboard.MaxStatsObjects)
	}

	step(t, ctx, "open the routers page", 60*time.Second,
		chromedp.Navigate(admin+"/dashboard/#routers"),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`#routers tbody tr[data-name="r00000@file"]`)))
	rows := value(t, ctx, "count the rows", 30*time.Second, chromedp.Evaluate[int](`document.querySelectorAll('#routers tbody tr').length`))
	pager := textOf(t, ctx, "read the pager", `#routers-pager`, "textContent")
	_, of, _ := strings.Cut(pager, " of ")
	total, _ := strconv.Atoi(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, strings.Fields(of + " x")[0]))
	if rows != 100 || total <= largeRouters { // the file's routers and Gantry's own
		t.Errorf("routers page shows %d rows and says %q; want 100 rows of more than %d", rows, pager, largeRouters)
	}
	shot(t, ctx, "large-routers.png")
	step(t, ctx, "filter for the last router", 30*time.Second,
		chromedp.SendKeys(chromedp.CSS(`#router-search`), fmt.Sprintf("r%05d", largeRouters-1)),
		shown(chromedp.CSS(`#routers tbody tr[data-name="`+last+`"]`)))
	if n := value(t, ctx, "count the filtered rows", 30*time.Second, chromedp.Evaluate[int](`document.querySelectorAll('#routers tbody tr').length`)); n != 1 {
		t.Errorf("filter shows %d rows, want 1", n)
	}
	step(t, ctx, "open the web entrypoint's page", 30*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#entrypoint/web'; undefined`),
		shown(chromedp.CSS(`#detail-body .more`)))
	if links := value(t, ctx, "count the router links", 30*time.Second, chromedp.Evaluate[int](`document.querySelectorAll('#detail-body a[href^="#router/"]').length`)); links != 50 {
		t.Errorf("entrypoint page links %d routers, want the first 50 and how many more", links)
	}
}
