package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// withBroken adds a router that is disabled in every configuration (its
// middleware does not exist).
func withBroken(dyn string) string {
	return strings.Replace(dyn, "  services:\n",
		"    broken:\n      entryPoints: [web]\n      rule: Host(`broken.example`)\n      middlewares: [missing]\n      service: whoami\n  services:\n", 1)
}

// TestRecentChangesNeverHidden (issue 28 items 2 and 3): configurations
// A→B→C→B. "Recent changes" lists the three changes in order, each with
// what it changed, although B recurs (the first B's "added router
// second@file" is not hidden behind the later B); the Revisions tab lists
// the four applications, each once, and only the newest is "(current)".
// A router disabled throughout is a problem in every revision, and the
// current revision's routers, services, middlewares and problems are the
// overview's. Screenshots: recent-changes.png, revisions-applications.png.
func TestRecentChangesNeverHidden(t *testing.T) {
	ctx := browser(t)
	e := &env{dir: t.TempDir()}
	e.backend = "http://" + harness.StartWhoami(t, "backend-1")
	write := func(dyn string) {
		harness.WriteFile(t, e.dir, "dynamic.yml", withBroken(dyn))
	}
	a := dynamicConfig(e.backend, "first")
	b := dynamicConfig(e.backend, "first", "second")
	c := strings.Replace(dynamicConfig(e.backend, "first", "second", "third"), "Host(`second.example`)", "Host(`second.example`) || Host(`two.example`)", 1)
	write(a)
	e.g = harness.Start(t, staticConfig(harness.FreeAddr(t), harness.FreeAddr(t), e.dir))
	e.admin = e.g.URL(t, "traefik", "")
	e.waitRouters(t, "first", "broken")
	step(t, ctx, "open the overview", 30*time.Second,
		chromedp.Navigate(e.admin+"/dashboard/#overview"),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`#changelog li[data-version]`)),
	)
	for i, dyn := range []string{b, c, b} {
		write(dyn)
		// Each configuration is applied before the next is written.
		want := []any{harness.StatusIs(200)}
		if i == 1 {
			want = append(want, harness.BodyContains(`"name":"third@file"`))
		} else {
			want = append(want, harness.BodyContains(`"name":"second@file"`), harness.BodyLacks(`"name":"third@file"`))
		}
		harness.TryGet(t, 60*time.Second, e.admin+"/api/http/routers", want...)
	}
	check := func(when string) {
		t.Helper()
		var items []string
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			items = value(t, ctx, "read the recent changes", 60*time.Second, chromedp.Evaluate[[]string](
				`[...document.querySelectorAll('#changelog li')].map((li) => li.textContent)`))
			if len(items) >= 4 && strings.Contains(items[0], "removed router third@file") {
				break
			}
		}
		if len(items) < 4 {
			t.Fatalf("%s: recent changes %q, want A→B, B→C, C→B and A", when, items)
		}
		for i, want := range [][]string{
			{"changed router second@file", "removed router third@file"},
			{"changed router second@file", "added router third@file"},
			{"added router second@file"},
		} {
			for _, w := range want {
				if !strings.Contains(items[i], w) {
					t.Errorf("%s: change %d %q lacks %q (all: %q)", when, i, items[i], w, items)
				}
			}
		}
	}
	check("live")
	shot(t, ctx, "recent-changes.png")
	step(t, ctx, "reload the page", 30*time.Second,
		chromedp.Reload(),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`#cards .card`)),
	)
	check("after a reload")

	step(t, ctx, "open the revisions", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#revisions'; undefined`),
		shown(chromedp.CSS(`#revisions tbody tr:nth-child(4)`)),
	)
	rows := value(t, ctx, "read the revisions", 60*time.Second, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#revisions tbody tr')].map((r) => r.innerText)`))
	if len(rows) < 4 {
		t.Fatalf("revisions %q, want the 4 applications", rows)
	}
	current := 0
	for i, r := range rows {
		if strings.Contains(r, "(current)") {
			current++
			if i != 0 {
				t.Errorf("revision %d %q is marked current; only the newest is", i, r)
			}
		}
	}
	if current != 1 {
		t.Errorf("%d revisions marked current, want 1: %q", current, rows)
	}
	seqs := value(t, ctx, "read the seqs", 60*time.Second, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#revisions tbody tr')].map((r) => r.dataset.seq)`))
	if seqs[0] == seqs[2] || seqs[0] == "" {
		t.Errorf("revision seqs %q: the recurring version must be two applications", seqs)
	}
	probs := value(t, ctx, "read the problems column", 60*time.Second, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#revisions tbody td.problems')].map((td) => td.textContent)`))
	for i, p := range probs[:4] {
		if p == "0" {
			t.Errorf("revision %d has 0 problems while broken@file is disabled in every one (%q)", i, probs)
		}
	}
	shot(t, ctx, "revisions-applications.png")

	// The current revision counts as the overview does.
	cur := value(t, ctx, "read the current revision", 60*time.Second, chromedp.Evaluate[[]string](
		`['routers', 'services', 'middlewares', 'problems'].map((k) => document.querySelector('#revisions tbody tr.current td.' + k).textContent)`))
	step(t, ctx, "open the overview", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#overview'; undefined`),
		shown(chromedp.CSS(`#cards .card`)))
	ov := value(t, ctx, "read the overview's cards", 60*time.Second, chromedp.Evaluate[[]string](
		`['Routers', 'Services', 'Middlewares', 'Problems'].map((k) => [...document.querySelectorAll('#cards .card')].find((c) => c.firstChild.textContent === k).querySelector('.n').textContent)`))
	if fmt.Sprint(cur) != fmt.Sprint(ov) {
		t.Errorf("current revision counts routers/services/middlewares/problems %v, overview %v", cur, ov)
	}
}
