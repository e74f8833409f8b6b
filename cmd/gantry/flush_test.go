package main

import (
	"testing"
	"time"
)

// Every flush at shutdown shares one clock: the second exporter gets what
// is left of the first one's budget, not a budget of its own; cut ends it.
func TestFlushBudgetIsShared(t *testing.T) {
	b := newFlushBudget(time.Hour)
	d1, ok1 := b.context().Deadline()
	d2, ok2 := b.context().Deadline()
	if !ok1 || !ok2 || !d1.Equal(d2) {
		t.Fatalf("deadlines %v (%v) and %v (%v), want one shared deadline", d1, ok1, d2, ok2)
	}
	if b.context().Err() != nil {
		t.Fatal("the budget ended before it was cut")
	}
	b.cut()
	if b.context().Err() == nil {
		t.Fatal("cut did not end the budget")
	}
	// cut before any use ends it too (a second signal during the drain).
	c := newFlushBudget(time.Hour)
	c.cut()
	if c.context().Err() == nil {
		t.Fatal("cut before use did not end the budget")
	}
}
