package dashboard

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardRereadsFailedEntrypoints: the first reads of the
// entrypoints fail (503, as from a proxy in front of Gantry that is
// restarting); the dashboard reads them again instead of showing Gantry
// without entrypoints until the next configuration change.
func TestDashboardRereadsFailedEntrypoints(t *testing.T) {
	ctx := browser(t)
	e := start(t, "first")
	// Two: the page's first read, and the read after the WebSocket's first
	// configuration message.
	const fails = 2
	var failed atomic.Int32
	front := e.frontProxy(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/entrypoints" && failed.Add(1) <= fails {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return true
		}
		return false
	})

	step(t, ctx, "the entrypoints list, read again after the failures", 60*time.Second,
		chromedp.Navigate(front+"/dashboard/#entrypoints"),
		shown(`#ep-list tbody tr[data-name="web"]`))
	if n := failed.Load(); n <= fails {
		t.Errorf("%d reads of /api/entrypoints, want more than the %d that failed", n, fails)
	}
}
