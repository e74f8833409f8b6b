package dashboard

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/observe"
)

// TestSamplerRings: one sample per tick holds that second's rates for the
// total, each router and each service; the fine ring keeps exactly the
// last 15 minutes; the coarse ring one sample per minute with the rate over
// that minute.
func TestSamplerRings(t *testing.T) {
	live := observe.NewLive()
	now := t0
	s := NewSampler(live, time.Second, func() time.Time { return now })
	ev := func(status int) *observe.RequestEvent {
		return &observe.RequestEvent{Router: "web@file", Service: "app@file", Status: status, Duration: 3 * time.Millisecond}
	}
	// 16 minutes: second i carries i%10 requests, one of them a 404 when
	// i%10 >= 2, and one 503 when i%10 >= 3.
	for i := range 16 * 60 {
		for j := range i % 10 {
			st := 200
			switch j {
			case 1:
				st = 404
			case 2:
				st = 503
			}
			live.Request(ev(st))
		}
		now = now.Add(time.Second)
		s.sample()
	}
	fine := s.read(keyTotal, "15m")
	if len(fine.T) != fineSamples {
		t.Fatalf("fine ring holds %d samples, want %d", len(fine.T), fineSamples)
	}
	if first, last := fine.T[0], fine.T[len(fine.T)-1]; last != now.UnixMilli() || last-first != (fineSamples-1)*1000 {
		t.Errorf("fine ring spans %d..%d, want the last 15 minutes ending at %d", first, last, now.UnixMilli())
	}
	for k, key := range []string{keyTotal, routerKey("web@file"), serviceKey("app@file")} {
		sr := s.read(key, "")
		for j := range sr.T {
			i := int((sr.T[j]-t0.UnixMilli())/1000) - 1 // the second this sample covers
			want := float32(i % 10)
			if sr.RPS[j] != want {
				t.Fatalf("%s: sample %d rps %v, want %v", key, j, sr.RPS[j], want)
			}
			var w4, w5 float32
			if i%10 >= 2 {
				w4 = 1
			}
			if i%10 >= 3 {
				w5 = 1
			}
			if sr.ClientErrors[j] != w4 || sr.ServerErrors[j] != w5 {
				t.Fatalf("%s: sample %d 4xx %v 5xx %v, want %v %v", key, j, sr.ClientErrors[j], sr.ServerErrors[j], w4, w5)
			}
			if want > 0 && (sr.P50[j] < 3 || sr.P50[j] > 3.75) {
				t.Fatalf("%s: p50 %v ms, want within 25%% above 3", key, sr.P50[j])
			}
		}
		_ = k
	}
	coarse := s.read(keyTotal, "24h")
	if len(coarse.T) != 16 || coarse.StepMs != 60000 {
		t.Fatalf("coarse ring: %d samples step %d, want 16 one-minute samples", len(coarse.T), coarse.StepMs)
	}
	for j, v := range coarse.RPS { // 60 seconds of 0..9 requests: 4.5/s
		if v != 4.5 {
			t.Errorf("coarse sample %d: %v rps, want 4.5", j, v)
		}
	}
	// A router that goes away loses its history; the total stays.
	s.forget(func(string) bool { return false }, func(n string) bool { return n == "app@file" }, func(string) bool { return true })
	if sr := s.read(routerKey("web@file"), ""); sr.RPS[len(sr.RPS)-1] != 0 {
		t.Error("removed router kept its history")
	}
	if sr := s.read(serviceKey("app@file"), ""); sr.RPS[len(sr.RPS)-1] == 0 {
		t.Error("kept service lost its history")
	}
}

func TestSeriesEndpoint(t *testing.T) {
	live := observe.NewLive()
	now := t0
	f := newFixture(t, func(o *Options) { o.Live = live; o.StatsInterval = time.Hour; o.Now = func() time.Time { return now } })
	live.Request(&observe.RequestEvent{Router: "web@file", Service: "app@file", Status: 200})
	now = now.Add(time.Second)
	f.api.sampler.sample()
	for path, want := range map[string]int{
		"/api/series":                            200,
		"/api/series?router=web@file":            200,
		"/api/series?service=app@file&range=24h": 200,
		"/api/series?range=1y":                   400,
	} {
		rec := do(t, f.api.Handler(), "GET", path, nil)
		if rec.Code != want {
			t.Errorf("%s: %d %s, want %d", path, rec.Code, rec.Body, want)
			continue
		}
		if want != 200 {
			continue
		}
		var s Series
		if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if path == "/api/series?router=web@file" && (len(s.RPS) != 1 || s.RPS[0] != 1 || s.Key != "router:web@file") {
			t.Errorf("%s: %+v", path, s)
		}
	}
}

// TestSamplerForgetsRemovedObjects: after a swap to a configuration without
// a router and a service, their counters and chart history go, with no
// WebSocket client connected; what remains keeps its history.
func TestSamplerForgetsRemovedObjects(t *testing.T) {
	live := observe.NewLive()
	f := newFixture(t, func(o *Options) { o.Live = live; o.StatsInterval = 10 * time.Millisecond; o.Now = time.Now })
	defer f.api.Close()
	live.Request(&observe.RequestEvent{Router: "old@file", Service: "gone@file", Status: 200})
	live.Request(&observe.RequestEvent{Router: "web@file", Service: "app@file", Status: 200})
	history := func() (old, web bool) {
		f.api.sampler.mu.Lock()
		defer f.api.sampler.mu.Unlock()
		_, old = f.api.sampler.fine.series[routerKey("old@file")]
		_, web = f.api.sampler.fine.series[routerKey("web@file")]
		return old, web
	}
	// Both routers sampled before the swap (a sleep was too short under
	// the race detector on a loaded machine).
	waitFor(t, "both routers in the chart history", func() bool { old, web := history(); return old && web })
	if s := live.Snapshot(time.Now()); s.Routers["old@file"].Requests != 1 {
		t.Fatalf("setup: old@file not counted: %v", s.Routers)
	}
	f.tables.swap(f.m1) // m1 has old@file as a router, not gone@file as a service
	f.tables.swap(f.m2) // m2 has neither
	// The counters are forgotten, then the history: wait for both.
	waitFor(t, "removed objects forgotten", func() bool {
		s := live.Snapshot(time.Now())
		_, oldR := s.Routers["old@file"]
		_, goneS := s.Services["gone@file"]
		old, _ := history()
		return !oldR && !goneS && !old
	})
	if _, webR := live.Snapshot(time.Now()).Routers["web@file"]; !webR {
		t.Error("web@file, still configured, was forgotten")
	}
	if _, web := history(); !web {
		t.Error("chart history of web@file, still configured, was dropped")
	}
}

// waitFor polls cond every 10 ms, failing t after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
	}
}

// TestRingBound: beyond MaxSeries objects, new ones get no history (the
// ring's memory is bounded) while the existing ones keep theirs.
func TestRingBound(t *testing.T) {
	r := newRing(4)
	rates := map[string]observe.Rate{}
	for i := range MaxSeries + 10 {
		rates[fmt.Sprintf("router:r%d@file", i)] = observe.Rate{RequestsPerSecond: 1}
	}
	r.add(t0, rates)
	if len(r.series) != MaxSeries {
		t.Errorf("%d series kept, want the bound %d", len(r.series), MaxSeries)
	}
}

// BenchmarkSample10kRouters is one second's sampling with 10 000 routers
// and services that saw traffic (the sampler's cost at Gantry's scale).
func BenchmarkSample10kRouters(b *testing.B) {
	live := observe.NewLive()
	for i := range 10000 {
		live.Request(&observe.RequestEvent{Router: fmt.Sprintf("r%d@file", i), Service: fmt.Sprintf("s%d@file", i), Status: 200, Duration: time.Millisecond})
	}
	now := t0
	s := NewSampler(live, time.Second, func() time.Time { return now })
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Second)
		s.sample()
	}
}

// TestSamplerServers: each sample carries every server's rates (attempts
// per second, 5xx share, latency) by URL, for the WebSocket's "stats"; a
// server the configuration no longer names is forgotten.
func TestSamplerServers(t *testing.T) {
	live := observe.NewLive()
	now := t0
	s := NewSampler(live, time.Second, func() time.Time { return now })
	for i := range 4 {
		st := 200
		if i%2 == 0 {
			st = 503
		}
		live.Request(&observe.RequestEvent{Router: "web@file", Service: "app@file", Status: st, Attempts: []observe.Attempt{
			{Upstream: "http://10.0.0.1:8080", Status: st, Duration: 20 * time.Millisecond},
		}})
	}
	now = now.Add(2 * time.Second)
	s.sample()
	got := s.Latest().Servers["http://10.0.0.1:8080"]
	if got.RequestsPerSecond != 2 || got.ErrorRatio != 0.5 || got.P50Ms < 20 || got.P50Ms > 25 {
		t.Errorf("server rates %+v, want 2/s, half 5xx, p50 about 20 ms", got)
	}
	b, err := json.Marshal(s.Latest())
	if err != nil || !strings.Contains(string(b), `"servers":{"http://10.0.0.1:8080":{"rps":2,`) {
		t.Errorf("stats JSON %s (%v) lacks the server's rates", b, err)
	}
	s.forget(func(string) bool { return true }, func(string) bool { return true }, func(u string) bool { return u != "http://10.0.0.1:8080" })
	now = now.Add(time.Second)
	s.sample()
	if _, ok := s.Latest().Servers["http://10.0.0.1:8080"]; ok {
		t.Error("a forgotten server is still sampled")
	}
}
