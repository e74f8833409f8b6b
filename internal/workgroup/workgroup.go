// Package workgroup holds Group: the work of an object that ends with it
// (background goroutines, requests it serves itself), bound to one context.
// Close refuses new work, cancels the context and waits for what was
// admitted before, so no work starts after Close has begun and none is
// left running when it returns. It imports nothing of Gantry's, so every
// layer may use it.
package workgroup

import (
	"context"
	"sync"
)

// Group admits work until Close. Its methods are safe for concurrent use.
// The zero Group is not usable: call New.
type Group struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex // guards closed and wg.Add, so no Add follows Wait
	closed bool
	wg     sync.WaitGroup
}

// New returns an open Group whose context derives from
// context.Background.
func New() *Group {
	ctx, cancel := context.WithCancel(context.Background())
	return &Group{ctx: ctx, cancel: cancel}
}

// Context is the Group's context, canceled when Close begins: the
// lifetime of the work it admits.
func (g *Group) Context() context.Context { return g.ctx }

// Enter admits one piece of work that the caller runs itself and reports
// true, or reports false (nothing admitted) once Close has begun. Each
// true is matched by one Leave when the work ends.
func (g *Group) Enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	return true
}

// Leave ends one piece of work Enter admitted.
func (g *Group) Leave() { g.wg.Done() }

// Go runs f in a new goroutine that Close waits for, and reports true;
// once Close has begun it reports false and does not run f.
func (g *Group) Go(f func()) bool {
	if !g.Enter() {
		return false
	}
	go func() {
		defer g.Leave()
		f()
	}()
	return true
}

// Close refuses new work, cancels the context, and waits until the work
// admitted before has ended. Safe to call more than once, and
// concurrently: every call waits.
func (g *Group) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.cancel()
	g.wg.Wait()
}
