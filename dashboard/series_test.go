package dashboard

import (
	"encoding/json"
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
	s := newSampler(live, time.Second, func() time.Time { return now })
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
	s.forget(func(string) bool { return false }, func(n string) bool { return n == "app@file" })
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
