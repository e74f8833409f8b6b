package dashboard

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestChartsReadable is issue 28 item 12 through the binary: the y axes
// read "0 / 25 / 50 req/s" (round numbers, the unit written), the time
// axis has at least four labels, the 1-second samples can be smoothed,
// and one slow request does not flatten the latency chart: its p99 is
// drawn clipped at the top with a marker giving the value.
func TestChartsReadable(t *testing.T) {
	ctx := browser(t)
	e := start(t, "load")
	step(t, ctx, "open the overview", 30*time.Second,
		chromedp.Navigate(e.admin+"/dashboard/#overview"),
		shown(chromedp.CSS(`#live.on`)),
		shown(chromedp.CSS(`[data-charts="overview"][data-loaded="true"] figure.chart svg`)))
	url := e.g.URL(t, "web", "/")
	if n := load(t, url, "load.example", 20, 12*time.Second); n < 200 {
		t.Fatalf("load: %d of 240 answered 200", n)
	}
	// One request of 2 s among a few hundred of about a millisecond.
	client := &http.Client{Timeout: 10 * time.Second}
	req, _ := http.NewRequest("GET", url+"?wait=2s", nil)
	req.Host = "load.example"
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := load(t, url, "load.example", 20, 4*time.Second); n < 60 {
		t.Fatalf("load: %d of 80 answered 200", n)
	}
	waitSampledAfter(t, ctx, "overview-rates", time.Now().UnixMilli())

	labels := func(chart, axis string) []string {
		return value(t, ctx, "read the "+chart+" chart's "+axis+" labels", 60*time.Second, chromedp.Evaluate[[]string](
			`[...document.querySelectorAll('[data-chart="`+chart+`"] svg text.axis.`+axis+`')].map(x => x.textContent)`))
	}
	ys := labels("overview-rates", "y")
	t.Logf("rates y axis: %v; x axis: %v", ys, labels("overview-rates", "x"))
	if len(ys) != 3 || ys[0] != "0" || !strings.HasSuffix(ys[2], " req/s") {
		t.Fatalf("rates y labels %v, want 0 / half / top req/s", ys)
	}
	top, err1 := strconv.ParseFloat(strings.TrimSuffix(ys[2], " req/s"), 64)
	half, err2 := strconv.ParseFloat(ys[1], 64)
	if err1 != nil || err2 != nil || half*2 != top || top < 20 || top > 100 {
		t.Errorf("rates y labels %v: want round numbers, the middle half the top, the top above the 20 req/s sent", ys)
	}
	for _, y := range ys {
		if strings.Contains(y, ".0") {
			t.Errorf("y label %q has a trailing zero", y)
		}
	}
	if xs := labels("overview-rates", "x"); len(xs) < 4 {
		t.Errorf("time axis has %d labels %v, want at least 4", len(xs), xs)
	}

	lat := labels("overview-latency", "y")
	t.Logf("latency y axis: %v", lat)
	if !strings.HasSuffix(lat[len(lat)-1], " ms") {
		t.Errorf("latency y labels %v lack the unit", lat)
	}
	ltop, _ := strconv.ParseFloat(strings.TrimSuffix(lat[len(lat)-1], " ms"), 64)
	if ltop >= 1000 {
		t.Errorf("the latency axis goes to %v ms: one 2 s request flattened every other sample", ltop)
	}
	marker := value(t, ctx, "read the clip marker", 60*time.Second, chromedp.Evaluate[string](
		`(() => { const m = document.querySelector('[data-chart="overview-latency"] svg .clipped[data-line="p99"] title'); return m ? m.textContent : '' })()`))
	if !strings.Contains(marker, "p99") || !strings.Contains(marker, "above the axis") {
		t.Errorf("the 2 s p99 has no marker at the top (got %q)", marker)
	}
	shot(t, ctx, "chart-axes.png")

	// Smoothing: the drawn line averages, the data stays the samples.
	raw := value(t, ctx, "read the raw line", 60*time.Second, chromedp.Evaluate[string](
		`document.querySelector('[data-chart="overview-rates"] polyline[data-line="rps"]').getAttribute('points')`))
	step(t, ctx, "smooth over 15 s", 60*time.Second,
		chromedp.SetValue(chromedp.CSS(`.ranges[data-for=overview] select.smooth`), "15"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('.ranges[data-for=overview] select.smooth').dispatchEvent(new Event('change')); undefined`),
		shown(chromedp.CSS(`[data-chart="overview-rates"][data-smooth="15"]`)))
	smoothed := value(t, ctx, "read the smoothed line", 60*time.Second, chromedp.Evaluate[[]float64](
		`(() => { const c = window.gantryCharts['overview-rates'];
		  const pts = document.querySelector('[data-chart="overview-rates"] polyline[data-line="rps"]').getAttribute('points').trim().split(/\s+/);
		  return [pts.length, c.t.length] })()`))
	after := value(t, ctx, "read the line", 60*time.Second, chromedp.Evaluate[string](
		`document.querySelector('[data-chart="overview-rates"] polyline[data-line="rps"]').getAttribute('points')`))
	if after == raw {
		t.Error("smoothing did not change the drawn line")
	}
	if smoothed[0] != smoothed[1] {
		t.Errorf("smoothed line has %v points for %v samples", smoothed[0], smoothed[1])
	}
	shot(t, ctx, "chart-smoothed.png")
}
