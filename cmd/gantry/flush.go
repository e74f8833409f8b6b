package main

import (
	"context"
	"sync"
	"time"
)

// flushBudget bounds, together, the flushes of queued telemetry at
// shutdown (OTLP access logs, spans, metrics, application logs): the
// first flush starts one clock of d and every later flush gets what is
// left of it, so four exporters pointed at a dead collector cost d, not
// 4×d (they ran one after another, 5 s each: over Docker's 10 s stop
// timeout). cut ends what is left at once (a second SIGTERM/SIGINT).
type flushBudget struct {
	d      time.Duration
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
}

// newFlushBudget returns a budget of d whose clock starts at first use.
func newFlushBudget(d time.Duration) *flushBudget { return &flushBudget{d: d} }

// context returns the budget's context, starting its clock on first use.
func (b *flushBudget) context() context.Context {
	b.once.Do(func() { b.ctx, b.cancel = context.WithTimeout(context.Background(), b.d) })
	return b.ctx
}

// cut ends the budget: flushes still running or to come return at once.
func (b *flushBudget) cut() {
	b.context()
	b.cancel()
}
