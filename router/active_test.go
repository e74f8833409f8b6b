package router

import (
	"sync"
	"testing"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestActiveSwap(t *testing.T) {
	a := NewActive()
	t0 := a.Load()
	if t0 == nil || t0.Version() != "" || t0.Merged() == nil || len(t0.Report().Routers) != 0 {
		t.Fatalf("initial table: %+v", t0)
	}
	if code := serveCode(t0, "web", req("GET", "http://h/")); code != 404 {
		t.Errorf("initial table: got %d, want 404", code)
	}
	t1 := Compile(t.Context(), mergedOf(map[string]string{"r@t": "PathPrefix(`/`)"}), &nameBuilder{}, webOnly)
	if old := a.Swap(t1); old != t0 {
		t.Errorf("Swap returned %p, want the initial table %p", old, t0)
	}
	if !closed(t0.Replaced()) || closed(t1.Replaced()) {
		t.Errorf("after swap: old replaced %v (want true), new replaced %v (want false)", closed(t0.Replaced()), closed(t1.Replaced()))
	}
	if a.Load() != t1 {
		t.Errorf("Load after Swap: not the new table")
	}
	if old := a.Swap(t1); old != t1 || closed(t1.Replaced()) {
		t.Errorf("swapping the live table again must not close its Replaced")
	}
	a.Swap(nil)
	if a.Load() == nil || !closed(t1.Replaced()) {
		t.Errorf("Swap(nil): want an empty live table and t1 replaced")
	}
}

// TestActiveConcurrent serves from many goroutines while tables are
// swapped; run with -race. Every request sees one complete generation.
func TestActiveConcurrent(t *testing.T) {
	a := NewActive()
	tables := []*Table{
		Compile(t.Context(), mergedOf(map[string]string{"one@t": "PathPrefix(`/`)"}), &nameBuilder{}, webOnly),
		Compile(t.Context(), mergedOf(map[string]string{"two@t": "PathPrefix(`/`)"}), &nameBuilder{}, webOnly),
	}
	a.Swap(tables[0])
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 2000 {
				tb := a.Load()
				_, body := serve(t, tb, req("GET", "http://h/"))
				if body != "one@t" && body != "two@t" {
					t.Errorf("got %q mid-swap", body)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := 1; i <= 500; i++ {
			old := a.Swap(tables[i%2])
			if old == tables[i%2] || !closed(old.Replaced()) {
				t.Errorf("swap %d: old table not replaced", i)
				return
			}
		}
	})
	wg.Wait()
}
