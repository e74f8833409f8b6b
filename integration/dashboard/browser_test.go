package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// chromiumPath finds Debian's chromium (or a compatible browser).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	harness.MissingTool(t, "chromium not installed: run scripts/setup/chromium.sh")
	return ""
}

// browser starts a fresh headless chromium and returns a chromedp context.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	// Start the browser now so a launch failure is reported on its own.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("launch chromium: %v", err)
	}
	ctx, err := recordNetwork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

// step runs actions with a deadline, failing t with what was being waited for.
func step(t *testing.T, ctx context.Context, what string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("%s: %v (page: %s)", what, err, pageState(ctx))
	}
}

// shown waits until an element matching sel is in the page and takes up
// room (chromedp's own visibility test: an offset width or height, or a
// client rect), asking the page every 50 ms with one script evaluation.
// chromedp's WaitVisible looks the element up among the DOM nodes it has
// tracked through DevTools events and waits until the node has arrived
// there; on the dashboard, which re-renders its tables on every WebSocket
// message, a step could time out with the element on the page (seen in
// CI: the entrypoint page of 10 000 routers). An evaluation that fails
// (the page is navigating) is tried again until ctx ends.
func shown(sel chromedp.CSS) chromedp.Action[chromedp.Void] {
	q, _ := json.Marshal(string(sel))
	js := `(() => { const e = document.querySelector(` + string(q) + `);
		return !!e && !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length); })()`
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if ok, err := chromedp.Evaluate[bool](js)(ctx, t); err == nil && ok {
				return chromedp.Void{}, nil
			}
			select {
			case <-ctx.Done():
				return chromedp.Void{}, fmt.Errorf("waiting for %s to be shown: %w", sel, ctx.Err())
			case <-tick.C:
			}
		}
	}
}

// pageState says where the page stands, for a step that timed out: its
// readiness, route, live badge, the resources it has read, and the
// requests that failed without a response (with the browser's reason).
func pageState(ctx context.Context) string {
	failed := ""
	if f := failedRequests(ctx); len(f) > 0 {
		failed = fmt.Sprintf("; failed requests: %q", f)
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := chromedp.Run(dctx, chromedp.Evaluate[string](`JSON.stringify({
		readyState: document.readyState, href: location.href,
		live: (document.getElementById('live') || {}).className,
		tab: [...document.querySelectorAll('.tab.active')].map((e) => e.id).join(' '),
		detail: ((document.getElementById('detail-body') || {}).innerText || '').slice(0, 300),
		resources: performance.getEntriesByType('resource').map(r => r.name.replace(location.origin, '') + ' ' + Math.round(r.duration) + 'ms'),
	})`))
	if err != nil {
		return "unknown: " + err.Error() + failed
	}
	return v + failed
}

// value runs one action that returns a value, with a deadline.
func value[T any](t *testing.T, ctx context.Context, what string, timeout time.Duration, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// textOf reads a property ("innerText" or "textContent") of the element
// sel in one script evaluation, polling until it is non-empty: the live
// dashboard re-renders its tables on WebSocket messages, so a node found by
// one call may be gone by the next (chromedp.Text's "No node with given id").
func textOf(t *testing.T, ctx context.Context, what, sel, prop string) string {
	t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.%s.trim() : "" })()`, sel, prop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		v := value(t, ctx, what, 60*time.Second, chromedp.Evaluate[string](js))
		if v != "" || time.Now().After(deadline) {
			return v
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDashboardInBrowser opens the dashboard of a real gantry, sees the
// router list, adds a router by editing the file configuration and sees it
// appear without a page reload, runs the route simulator, and saves a
// screenshot to integration/artifacts/dashboard.png.
func TestDashboardInBrowser(t *testing.T) {
	ctx := browser(t)
	e := start(t, "first")

	step(t, ctx, "open the dashboard and see router first@file", 30*time.Second,
		chromedp.Navigate(e.admin+"/dashboard/#routers"),
		shown(chromedp.CSS(`#routers tbody tr[data-name="first@file"]`)),
		shown(chromedp.CSS(`#live.on`)),
	)
	rule := textOf(t, ctx, "read first@file's rule", `#routers tbody tr[data-name="first@file"] td.rule`, "innerText")
	if rule != "Host(`first.example`)" {
		t.Errorf("first@file rule shows %q", rule)
	}
	// A marker that survives only as long as the page is not reloaded.
	step(t, ctx, "mark the page", 60*time.Second, chromedp.Evaluate[chromedp.Void](`window.gantryNoReload = 42; undefined`))

	harness.WriteFile(t, e.dir, "dynamic.yml", dynamicConfig(e.backend, "first", "second"))
	step(t, ctx, "see router second@file appear live", 60*time.Second,
		shown(chromedp.CSS(`#routers tbody tr[data-name="second@file"]`)))
	if marker := value(t, ctx, "read the marker", 60*time.Second, chromedp.Evaluate[int](`window.gantryNoReload || 0`)); marker != 42 {
		t.Errorf("the page was reloaded (marker %d): the new router must arrive over the WebSocket", marker)
	}
	changelog := textOf(t, ctx, "read the change log", `#changelog`, "textContent")
	if !strings.Contains(changelog, "added router second@file") {
		t.Errorf("change log %q lacks the added router", changelog)
	}

	// Traffic through the proxy, then the simulator on the same page.
	harness.TryGet(t, 60*time.Second, e.g.URL(t, "web", "/"), harness.Host("second.example"), harness.StatusIs(200))
	step(t, ctx, "run the simulator", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#simulator'; undefined`),
		shown(chromedp.CSS(`#sim-form`)),
		chromedp.WaitReady(chromedp.CSS(`#sim-ep option[value="web"]`)),
		chromedp.SetValue(chromedp.CSS(`#sim-ep`), "web"),
		chromedp.SetValue(chromedp.CSS(`#sim-url`), "http://second.example/hello"),
		chromedp.Click(chromedp.CSS(`#sim-run`)),
		shown(chromedp.CSS(`#sim-result .winner strong`)),
	)
	winner := textOf(t, ctx, "read the winner", `#sim-result .winner strong`, "innerText")
	if winner != "second@file" {
		t.Errorf("simulator winner %q, want second@file", winner)
	}
	if rows := value(t, ctx, "count candidates", 60*time.Second, chromedp.Evaluate[int](`document.querySelectorAll('#sim-result tbody tr').length`)); rows < 1 {
		t.Errorf("simulator shows %d candidates", rows)
	}

	// The revision history holds both configurations; compare them.
	step(t, ctx, "compare the last two revisions", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#revisions'; undefined`),
		shown(chromedp.CSS(`#revisions tbody tr:nth-child(2) input[name=rev-a]`)),
		chromedp.Click(chromedp.CSS(`#diff-btn`)),
		shown(chromedp.CSS(`#diff-table`)),
	)
	diff := textOf(t, ctx, "read the diff", `#diff-table`, "textContent")
	if !strings.Contains(diff, "added") || !strings.Contains(diff, "second@file") {
		t.Errorf("diff view %q, want second@file added", diff)
	}
	step(t, ctx, "show the certificates", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#certificates'; undefined`),
		shown(chromedp.CSS(`#cert-list .empty`)))
	if s := textOf(t, ctx, "read the certificates page", `#cert-list`, "innerText"); s != "No certificates: none in tls.certificates and no ACME resolver." {
		t.Errorf("certificates page without resolvers says %q", s)
	}
	if hidden := value(t, ctx, "read the cluster tab", 60*time.Second, chromedp.Evaluate[bool](`document.getElementById('cluster-tab').hidden`)); !hidden {
		t.Error("a Cluster tab is shown without cluster.consul")
	}
	if hidden := value(t, ctx, "read the ingress-nginx tab", 60*time.Second, chromedp.Evaluate[bool](`document.getElementById('migration-tab').hidden`)); !hidden {
		t.Error("an ingress-nginx tab is shown without providers.kubernetesIngressNGINX")
	}
	for _, tab := range []string{"overview", "services", "providers", "revisions"} {
		step(t, ctx, "show "+tab, 60*time.Second,
			chromedp.Evaluate[chromedp.Void](`location.hash = '#`+tab+`'; undefined`),
			shown(chromedp.CSS(`#`+tab+`.active`)))
		shot(t, ctx, "dashboard-"+tab+".png")
	}

	step(t, ctx, "back to the routers", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#routers'; undefined`),
		shown(chromedp.CSS(`#routers tbody tr[data-name="second@file"]`)))
	shot(t, ctx, "dashboard.png")
}

// shot saves a full-page PNG screenshot to integration/artifacts/name.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png := value(t, ctx, "screenshot "+name, 60*time.Second, chromedp.FullScreenshot(100))
	dir := filepath.Join("..", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", out, len(png))
}

// chartLast waits (up to 30 s) until chart id (window.gantryCharts) holds
// a sample and returns the time of its last one (unix ms). A sample's rate
// is over the time since the one before it, so requests made after this
// time fall into samples that chartGrowth can count.
func chartLast(t *testing.T, ctx context.Context, id string) float64 {
	t.Helper()
	js := fmt.Sprintf(`(() => { const d = window.gantryCharts[%q]; return d && d.t.length ? d.t[d.t.length - 1] : 0 })()`, id)
	var last float64
	for deadline := time.Now().Add(30 * time.Second); last == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		last = value(t, ctx, "read the last sample of "+id, 30*time.Second, chromedp.Evaluate[float64](js))
	}
	if last == 0 {
		t.Fatalf("chart %s holds no sample after 30 s", id)
	}
	return last
}

// chartGrowth waits (up to 30 s) until chart id's samples after time
// since (unix ms, from chartLast) count at least want requests (each
// sample's rate times the time since the sample before it), and returns
// what they count.
func chartGrowth(t *testing.T, ctx context.Context, id string, since, want float64) float64 {
	t.Helper()
	js := fmt.Sprintf(`(() => {
		const d = window.gantryCharts[%q]; let n = 0;
		if (!d) return -1;
		for (let i = 1; i < d.t.length; i++) if (d.t[i] > %f) n += d.rps[i] * (d.t[i] - d.t[i - 1]) / 1000;
		return n; })()`, id, since)
	var n float64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if n = value(t, ctx, "count the requests of "+id, 30*time.Second, chromedp.Evaluate[float64](js)); n >= want-0.5 {
			break
		}
	}
	return n
}
