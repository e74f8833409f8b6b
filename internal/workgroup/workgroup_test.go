package workgroup

import (
	"sync/atomic"
	"testing"
)

// TestCloseCancelsAndWaits: work admitted before Close sees the context
// canceled and has ended when Close returns; work offered after is
// refused and never runs.
func TestCloseCancelsAndWaits(t *testing.T) {
	g := New()
	var ended atomic.Int32
	started := make(chan struct{})
	if !g.Go(func() {
		close(started)
		<-g.Context().Done()
		ended.Add(1)
	}) {
		t.Fatal("Go refused work before Close")
	}
	if !g.Enter() {
		t.Fatal("Enter refused work before Close")
	}
	go func() {
		defer g.Leave()
		<-g.Context().Done()
		ended.Add(1)
	}()
	<-started
	g.Close()
	if n := ended.Load(); n != 2 {
		t.Fatalf("Close returned with %d of 2 admitted pieces of work ended", n)
	}
	if g.Context().Err() == nil {
		t.Fatal("context not canceled after Close")
	}
	ran := false
	if g.Go(func() { ran = true }) {
		t.Fatal("Go admitted work after Close")
	}
	if g.Enter() {
		t.Fatal("Enter admitted work after Close")
	}
	g.Close() // a second Close returns at once: nothing is left
	if ran {
		t.Fatal("refused work ran")
	}
}
