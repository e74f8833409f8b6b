package dashboard

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestChartKeepsSamplesPushedWhileLoading: the overview chart's history
// (/api/series) answers 4.5 s late, as through a slow link or a busy
// proxy in front of Gantry; the samples the WebSocket pushed meanwhile
// are newer than the history and must follow it in the chart, not be
// lost: no hole between the history's last sample and the live ones
// (a hole also made the chart's rate of the next sample count the
// requests of the whole hole: a test counting requests on a chart saw
// twice the requests made).
func TestChartKeepsSamplesPushedWhileLoading(t *testing.T) {
	ctx := browser(t)
	e := start(t, "load")
	const delay = 4500 * time.Millisecond
	front := e.frontProxy(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/series" {
			return false
		}
		// Read the series now, answer it later: the history is cut
		// before the samples pushed during the delay.
		resp, err := http.Get(e.admin + r.URL.RequestURI())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return true
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return true
		}
		time.Sleep(delay)
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
		return true
	})

	// A history of a few samples first, so that what follows it shows.
	harness.Try(t, 30*time.Second, func() error {
		resp, err := http.Get(e.admin + "/api/series?range=15m")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var s struct {
			T []float64 `json:"t"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
			return err
		}
		if len(s.T) < 3 {
			return fmt.Errorf("/api/series holds %d samples, want 3", len(s.T))
		}
		return nil
	})
	step(t, ctx, "open the overview through the slow proxy", 60*time.Second,
		chromedp.Navigate(front+"/dashboard/#overview"),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`[data-charts="overview"][data-loaded="true"] figure.chart svg`)))
	waitSampledAfter(t, ctx, "overview-rates", time.Now().UnixMilli())
	ts := value(t, ctx, "read the overview chart's sample times", 30*time.Second, chromedp.Evaluate[[]float64](
		`window.gantryCharts['overview-rates'].t`))
	if len(ts) < 4 {
		t.Fatalf("the overview chart holds %d samples, want the history and the live ones", len(ts))
	}
	// Samples are one second apart; 2.5 s leaves room for a late tick on
	// a busy machine and is well under the 4.5 s a lost stretch leaves.
	for i := 1; i < len(ts); i++ {
		if gap := ts[i] - ts[i-1]; gap > 2500 {
			t.Errorf("the overview chart has no sample for %.1f s (between sample %d and %d of %d): the samples pushed while its history loaded were lost", gap/1000, i-1, i, len(ts))
		}
	}
}
