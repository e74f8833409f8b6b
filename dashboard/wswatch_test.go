package dashboard

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/observe"
)

// TestStatsBoundedAndWatched: with more routers than MaxStatsObjects, a
// stats message carries at most that many: the one the client watches
// (idle in this sample), every failing one, then the busiest, and says how
// many it left out; samples are numbered.
func TestStatsBoundedAndWatched(t *testing.T) {
	live := observe.NewLive()
	sampler := NewSampler(live, time.Hour, nil)
	f := newFixture(t, func(o *Options) { o.Sampler = sampler })
	srv := httptest.NewServer(f.api.Handler())
	defer srv.Close()
	c := dialWS(t, srv)
	next(t, c, "config", time.Now().Add(30*time.Second))

	const n = 3 * MaxStatsObjects
	live.Request(&observe.RequestEvent{Router: "watched@file", Service: "watched@file", Status: 200})
	sampler.sample() // watched@file is known, idle from now on
	first := next(t, c, "stats", time.Now().Add(30*time.Second))
	if err := c.WriteJSON(map[string]Watch{"watch": {Routers: []string{"watched@file"}}}); err != nil {
		t.Fatal(err)
	}
	// The watch is read by the connection's read loop: wait until a
	// sample carries the idle watched router, so the one sample taken
	// after the burst below is chosen with the watch in place.
	for deadline := time.Now().Add(30 * time.Second); ; {
		sampler.sample()
		s := next(t, c, "stats", deadline)
		if _, ok := s.Stats.Routers["watched@file"]; ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watched router never appeared in the stats")
		}
	}
	for i := range n {
		name := fmt.Sprintf("r%04d@file", i)
		status := 200
		if i%100 == 7 {
			status = 502
		}
		for range 1 + i%5 {
			live.Request(&observe.RequestEvent{Router: name, Service: name, Status: status})
		}
	}
	sampler.sample()
	s := next(t, c, "stats", time.Now().Add(30*time.Second))
	st := s.Stats
	if _, ok := st.Routers["watched@file"]; !ok {
		t.Error("the watched router is not in the stats")
	}
	if len(st.Routers) != MaxStatsObjects || len(s.Routers) != MaxStatsObjects || len(st.Services) != MaxStatsObjects {
		t.Errorf("stats carry %d routers (%d again), %d services; want %d", len(st.Routers), len(s.Routers), len(st.Services), MaxStatsObjects)
	}
	if st.Omitted == nil || st.Omitted.Routers != n+1-MaxStatsObjects {
		t.Errorf("omitted %+v, want %d routers", st.Omitted, n+1-MaxStatsObjects)
	}
	for i := 7; i < n; i += 100 { // every failing router
		if r := st.Routers[fmt.Sprintf("r%04d@file", i)]; r.ErrorsPerSecond == 0 {
			t.Errorf("failing router r%04d@file missing from the stats", i)
		}
	}
	// Then the busiest: every router sent 5 requests is kept, and the
	// rest of the room goes to routers sent 4 (counted by name: rates
	// are per second of the sample's real interval, so they depend on
	// how long the burst took, the order between routers does not).
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("r%04d@file", i)
		_, kept := st.Routers[name]
		switch sent := 1 + i%5; {
		case i%100 == 7:
		case sent == 5 && !kept:
			t.Errorf("router %s (5 requests) left out", name)
		case sent < 4 && kept:
			t.Errorf("router %s (%d requests) kept over busier ones", name, sent)
		}
	}
	if first.Stats.Seq == 0 || st.Seq <= first.Stats.Seq {
		t.Errorf("sample numbers %d then %d, want increasing from 1", first.Stats.Seq, st.Seq)
	}
}

// TestStatsServersBounded: the stats' server list keeps the down servers
// first when cut, and each server names at most maxSharedServices services.
func TestStatsServersBounded(t *testing.T) {
	servers := make([]Server, 2*MaxStatsObjects)
	many := make([]string, 50)
	for i := range many {
		many[i] = fmt.Sprintf("s%d@file", i)
	}
	for i := range servers {
		servers[i] = Server{URL: fmt.Sprintf("http://10.0.%d.%d:80", i/250, i%250), Up: i%97 != 3, Services: many}
	}
	got, left := boundServers(servers, nil)
	if len(got) != MaxStatsObjects || left != MaxStatsObjects {
		t.Fatalf("%d servers, %d left out; want %d and %d", len(got), left, MaxStatsObjects, MaxStatsObjects)
	}
	down := map[string]bool{}
	for _, s := range got {
		if !s.Up {
			down[s.URL] = true
		}
		if len(s.Services) > maxSharedServices {
			t.Fatalf("server %s names %d services", s.URL, len(s.Services))
		}
	}
	for _, s := range servers {
		if !s.Up && !down[s.URL] {
			t.Errorf("down server %s left out", s.URL)
		}
	}
}
