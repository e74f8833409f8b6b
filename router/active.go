package router

import (
	"sync/atomic"

	"github.com/gantry-proxy/gantry/router/routestats"
)

// Active holds the live Table. Load is one atomic read and never blocks,
// so the request path takes no lock; Swap publishes a new generation in
// one atomic step (the gRPC pickerWrapper pattern). The zero value is not
// usable; call NewActive.
type Active struct {
	cur atomic.Pointer[Table]
	// stats are the TCP and UDP routers' live counters, kept across
	// swaps (routestats).
	stats routestats.Registry
}

// Stats returns the live counters of TCP and UDP routers by name.
func (a *Active) Stats() *routestats.Registry { return &a.stats }

// NewActive returns an Active holding an empty Table: no routes (every
// request gets 404), version "".
func NewActive() *Active {
	a := &Active{}
	a.cur.Store(emptyTable())
	return a
}

// Load returns the live Table; never nil. Keep the returned pointer for the
// whole request so that one request sees one generation.
func (a *Active) Load() *Table { return a.cur.Load() }

// Swap makes t the live Table and returns the previous one, after closing
// the previous table's Replaced channel (so waiters wake up and Load the
// new one). Swapping in the table that is already live changes nothing; a
// table swapped in again after being replaced keeps its Replaced closed,
// so compile a new Table per generation. A nil t is replaced by an empty
// table. Safe for concurrent use.
func (a *Active) Swap(t *Table) (old *Table) {
	if t == nil {
		t = emptyTable()
	}
	old = a.cur.Swap(t)
	if old != t {
		old.markReplaced()
		a.stats.Forget(t.hasStreamRouter)
	}
	return old
}
