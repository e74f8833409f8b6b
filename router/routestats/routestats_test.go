package routestats

import (
	"sync"
	"testing"
)

// Counters add up under concurrent use; Forget drops routers that are gone
// and idle, and keeps one that is gone but still has a connection open (it
// is closed after the grace period and must still be counted).
func TestCountersAndForget(t *testing.T) {
	var r Registry
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c := r.Router("a@file")
			c.Opened()
			c.BytesIn().Add(10)
			c.BytesOut().Add(20)
			c.DatagramIn(3)
			c.DatagramOut(4)
			c.Closed()
		})
	}
	wg.Wait()
	got, ok := r.Get("a@file")
	want := Stats{Open: 0, Total: 8, BytesIn: 8 * 13, BytesOut: 8 * 24, DatagramsIn: 8, DatagramsOut: 8}
	if !ok || got != want {
		t.Fatalf("stats %+v %v, want %+v", got, ok, want)
	}
	r.Router("busy@file").Opened()
	r.Router("kept@file").Opened()
	r.Router("kept@file").Closed()
	r.Forget(func(name string) bool { return name == "kept@file" })
	if _, ok := r.Get("a@file"); ok {
		t.Error("a removed idle router keeps its counters")
	}
	if st, ok := r.Get("busy@file"); !ok || st.Open != 1 {
		t.Errorf("a removed router with an open connection lost its counters: %+v %v", st, ok)
	}
	if st, ok := r.Get("kept@file"); !ok || st.Total != 1 {
		t.Errorf("a kept router lost its counters: %+v %v", st, ok)
	}
	var sum Stats
	sum.Add(want)
	sum.Add(want)
	if sum.Total != 16 || sum.BytesOut != 2*8*24 {
		t.Errorf("Add: %+v", sum)
	}
}
