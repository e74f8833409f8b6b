package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/web"
)

// TestDashboardReloadsWhenItsCodeFailsToLoad: when a request for one of the
// dashboard's modules is cut (no response), the browser gives up the whole
// module graph; boot.js reloads the page and the dashboard starts (its
// overview charts are drawn). Every request for tls.js is cut during the
// first load of the page (the browser's own retries too), then served.
func TestDashboardReloadsWhenItsCodeFailsToLoad(t *testing.T) {
	ctx := browser(t)
	var loads, cut atomic.Int32
	files := http.FileServerFS(web.FS())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			loads.Add(1)
		}
		if r.URL.Path == "/tls.js" && loads.Load() < 2 {
			cut.Add(1)
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	step(t, ctx, "open the dashboard whose tls.js is cut at the first load", 60*time.Second,
		chromedp.Navigate(srv.URL+"/"))
	// The page reloads itself: poll across the navigation.
	started := false
	for deadline := time.Now().Add(60 * time.Second); !started && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		started, _ = chromedp.Run(ectx, chromedp.Evaluate[bool](`!!document.querySelector('#overview-charts') && document.querySelector('#overview-charts').children.length > 0 && sessionStorage.getItem('gantry-dashboard-boot-failures') === null`))
		cancel()
	}
	if !started {
		t.Errorf("the dashboard did not start (page: %s)", pageState(ctx))
	}
	if c, n := cut.Load(), loads.Load(); c == 0 || n != 2 {
		t.Errorf("tls.js cut %d times, the page loaded %d times; want cuts and 2 loads", c, n)
	}
}
