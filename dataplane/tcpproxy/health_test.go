package tcpproxy

import "testing"

// A state is shared while any generation holds it and forgotten when the
// last lets go (a server that comes back later starts healthy).
func TestHealthStatesShareAndRelease(t *testing.T) {
	var h HealthStates
	a, relA := h.Acquire("s\x00addr")
	if !a.Load() {
		t.Fatal("a new state is not healthy")
	}
	a.Store(false)
	b, relB := h.Acquire("s\x00addr")
	if b != a || b.Load() {
		t.Fatal("the next generation does not share the state")
	}
	relA()
	relA() // idempotent
	if c, relC := h.Acquire("s\x00addr"); c != a {
		t.Error("the state was dropped while held")
	} else {
		relC()
	}
	relB()
	if c, _ := h.Acquire("s\x00addr"); c == a || !c.Load() {
		t.Error("a released state was kept")
	}
}
