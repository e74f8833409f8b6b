package dataplane

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func newTestLeastTime(ts []*target) (*leastTimePicker, *int64) {
	stats := make([]*latencyStats, len(ts))
	for i := range stats {
		stats[i] = &latencyStats{}
	}
	p := newLeastTime(ts, stats)
	clock := new(int64)
	*clock = int64(time.Hour)
	p.now = func() int64 { return *clock }
	return p, clock
}

// The lowest TTFB × (1 + in flight) / weight wins.
func TestLeastTimeScore(t *testing.T) {
	ts := testTargets(1, 1, 2)
	p, clock := newTestLeastTime(ts)
	p.stats[0].observe(10*time.Millisecond, *clock)
	p.stats[1].observe(20*time.Millisecond, *clock)
	p.stats[2].observe(30*time.Millisecond, *clock)
	for range 5 {
		if got, _ := p.pick(nil); got != ts[0] {
			t.Fatalf("picked %s, want the fastest %s", got.url, ts[0].url)
		}
	}
	// 10ms × (1+2) = 30 > 20 × 1 > 30 × 1 / 2 = 15: the weighted one wins.
	ts[0].backend.inflight.Store(2)
	if got, _ := p.pick(nil); got != ts[2] {
		t.Fatalf("picked %s, want %s (30ms / weight 2)", got.url, ts[2].url)
	}
	// Unavailable and weight 0 are never picked.
	ts[2].passive = &passivePolicy{window: time.Minute, maxFailures: 1}
	ts[2].backend.downUntil.Store(time.Now().Add(time.Hour).UnixNano())
	if got, _ := p.pick(nil); got != ts[1] {
		t.Fatalf("picked %s, want %s", got.url, ts[1].url)
	}
}

// Servers with no sample share the traffic by weight, and a server without
// samples still counts its requests in flight (no pile-up on it).
func TestLeastTimeColdStartAndTies(t *testing.T) {
	ts := testTargets(3, 1)
	p, _ := newTestLeastTime(ts)
	if c := pickCounts(t, p, ts, 400, nil); c[0] != 300 || c[1] != 100 {
		t.Fatalf("cold-start ties shared %v, want [300 100] (smooth WRR by weight)", c)
	}
	ts[0].backend.inflight.Store(5)
	if got, _ := p.pick(nil); got != ts[1] {
		t.Fatal("an unsampled server with 5 requests in flight still won over an idle one")
	}
}

// The starvation fix: a server that was slow once is probed again after
// ltProbeAfter, once, and a fast probe answer brings it back.
func TestLeastTimeProbesASlowServer(t *testing.T) {
	ts := testTargets(1, 1)
	p, clock := newTestLeastTime(ts)
	p.stats[0].observe(2*time.Second, *clock) // slow once
	p.stats[1].observe(time.Millisecond, *clock)
	for range 50 {
		*clock += int64(50 * time.Millisecond)
		got, _ := p.pick(nil)
		if got == ts[0] && *clock-int64(time.Hour) < int64(ltProbeAfter) {
			t.Fatal("slow server picked before its probe was due")
		}
		if got == ts[1] {
			p.stats[1].observe(time.Millisecond, *clock)
		}
	}
	// 2.5s have passed: exactly one of the last picks was the probe.
	probes := 0
	*clock += int64(ltProbeAfter) + 1
	for range 3 {
		if got, _ := p.pick(nil); got == ts[0] {
			probes++
		}
	}
	if probes != 1 {
		t.Fatalf("%d probes of the idle slow server, want exactly 1", probes)
	}
	// The probe answered fast after a long gap: its sample nearly replaces
	// the old 2s, so the server competes again.
	p.stats[0].observe(time.Millisecond, *clock)
	if v := time.Duration(p.stats[0].ttfb()); v > 100*time.Millisecond {
		t.Fatalf("TTFB after a fast probe = %s, want close to 1ms", v)
	}
}

// Through a real load balancer: the slow backend gets only the requests
// it must (its first sample and probes), the fast one the rest; the record
// survives a configuration swap (state lives in the Pool).
func TestLeastTimeBalancer(t *testing.T) {
	slow := newTestServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		fmt.Fprint(w, "slow")
	}))
	defer slow.Close()
	fast := newTestServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "fast") }))
	defer fast.Close()
	h := newHarness(t, nil, nil)
	cfg := fmt.Sprintf(`
http:
  routers: {r@file: {rule: "Host(`+"`lt`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {strategy: leasttime, servers: [{url: %q}, {url: %q}]}}}
`, slow.URL, fast.URL)
	tbl := h.apply(cfg, GenerationOptions{})
	if st := tbl.Report().Routers["r@file"]; st == nil || st.Status != "enabled" {
		t.Fatalf("router status %+v, want enabled", st)
	}
	counts := map[string]int{}
	for range 20 {
		code, body := h.get("web", "lt", "/")
		if code != 200 {
			t.Fatalf("status %d", code)
		}
		counts[body]++
	}
	if counts["slow"] > 2 || counts["fast"] < 18 {
		t.Fatalf("distribution %v, want the slow server at most twice (first sample, maybe a probe)", counts)
	}
	h.apply(strings.Replace(cfg, "leasttime", "leasttime, passHostHeader: false", 1), GenerationOptions{})
	counts = map[string]int{}
	for range 10 {
		_, body := h.get("web", "lt", "/")
		counts[body]++
	}
	if counts["slow"] > 1 {
		t.Fatalf("after a swap %v: the TTFB record was lost", counts)
	}
}
