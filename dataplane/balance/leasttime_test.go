package balance

import (
	"testing"
	"time"
)

func newTestLeastTime(ts []*Server) (*LeastTime, *int64) {
	stats := make([]*Latency, len(ts))
	for i := range stats {
		stats[i] = &Latency{}
	}
	p := NewLeastTime(ts, stats)
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
		if got, _ := p.Pick(nil); got != 0 {
			t.Fatalf("picked %s, want the fastest %s", ts[got].URL, ts[0].URL)
		}
	}
	// 10ms × (1+2) = 30 > 20 × 1 > 30 × 1 / 2 = 15: the weighted one wins.
	ts[0].Backend.inflight.Store(2)
	if got, _ := p.Pick(nil); got != 2 {
		t.Fatalf("picked %s, want %s (30ms / weight 2)", ts[got].URL, ts[2].URL)
	}
	// Unavailable and weight 0 are never picked.
	ts[2].Passive = &Passive{window: time.Minute, maxFailures: 1}
	ts[2].Backend.downUntil.Store(time.Now().Add(time.Hour).UnixNano())
	if got, _ := p.Pick(nil); got != 1 {
		t.Fatalf("picked %s, want %s", ts[got].URL, ts[1].URL)
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
	ts[0].Backend.inflight.Store(5)
	if got, _ := p.Pick(nil); got != 1 {
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
		got, _ := p.Pick(nil)
		if got == 0 && *clock-int64(time.Hour) < int64(ltProbeAfter) {
			t.Fatal("slow server picked before its probe was due")
		}
		if got == 1 {
			p.stats[1].observe(time.Millisecond, *clock)
		}
	}
	// 2.5s have passed: exactly one of the last picks was the probe.
	probes := 0
	*clock += int64(ltProbeAfter) + 1
	for range 3 {
		if got, _ := p.Pick(nil); got == 0 {
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
