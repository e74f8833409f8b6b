package h1

import (
	"context"
	"sync"
	"time"
)

// reqContext is the context of a connection's requests. One is reused
// from request to request as long as nobody waited on it, so a request
// costs no context allocation:
//
//   - cancel (the client left, or the request ended) closes Done, runs the
//     functions registered with AfterFunc and makes Err non-nil, as a
//     context.WithCancel child of the connection's context would;
//   - a request whose context was waited on — Done called, a context
//     derived from it (context.WithCancel/WithTimeout call Done), or
//     AfterFunc — has it cancelled when ServeHTTP returns, exactly as
//     net/http does, and the next request gets a new one;
//   - a context nobody waited on is kept for the next request: its Err
//     stays nil after ServeHTTP returned. Like the Request itself (see
//     Server), it must not be used after ServeHTTP returns.
//
// Value and Deadline are the connection context's. A cancellable
// connection context cancels it too (context.AfterFunc, once per
// reqContext).
type reqContext struct {
	parent context.Context

	mu     sync.Mutex
	done   chan struct{} // made by Done; closed by cancel
	err    error         // set by cancel
	used   bool          // Done or AfterFunc was called: cancel when the request ends
	funcs  []*afterFunc  // registered by AfterFunc, run by cancel
	stopPa func() bool   // stops the parent's AfterFunc; nil without one
}

type afterFunc struct{ f func() }

// closedChan is Done of a context cancelled before anyone asked for Done.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func newReqContext(parent context.Context) *reqContext {
	c := &reqContext{parent: parent}
	if parent.Done() != nil {
		c.stopPa = context.AfterFunc(parent, func() { c.cancel(context.Cause(parent)) })
	}
	return c
}

func (c *reqContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }
func (c *reqContext) Value(key any) any           { return c.parent.Value(key) }

func (c *reqContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used = true
	if c.done == nil {
		if c.err != nil {
			c.done = closedChan
		} else {
			c.done = make(chan struct{})
		}
	}
	return c.done
}

func (c *reqContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// AfterFunc is what context.AfterFunc and context.WithCancel use for a
// parent that is not one of the context package's own (the afterFuncer
// interface): f runs in its own goroutine once c is cancelled, and no
// goroutine waits meanwhile.
func (c *reqContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used = true
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	c.funcs = append(c.funcs, a)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, b := range c.funcs {
			if b == a {
				c.funcs = append(c.funcs[:i], c.funcs[i+1:]...)
				return true
			}
		}
		return false
	}
}

// cancel cancels c with err (context.Canceled when nil). Idempotent.
func (c *reqContext) cancel(err error) {
	if err == nil {
		err = context.Canceled
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	funcs := c.funcs
	c.funcs = nil
	stop := c.stopPa
	c.mu.Unlock()
	for _, a := range funcs {
		go a.f()
	}
	if stop != nil {
		stop()
	}
}

// end is called when the request's handler returned: a context that was
// waited on or cancelled is cancelled and reports false (the next request
// needs a new one); an untouched one reports true and is reused.
func (c *reqContext) end() (reuse bool) {
	c.mu.Lock()
	reuse = !c.used && c.err == nil
	c.mu.Unlock()
	if !reuse {
		c.cancel(context.Canceled)
	}
	return reuse
}

// release stops the parent's AfterFunc of a context that will not be
// used any more (the connection is done with it).
func (c *reqContext) release() {
	if c.stopPa != nil {
		c.stopPa()
	}
}
