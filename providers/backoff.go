package providers

import (
	"context"
	"time"
)

// Backoff is the delay before restarting something that failed: Min at
// first, doubling after each failure up to Max; a run that lasted at
// least Max starts again from Min. The zero value needs Min and Max set.
type Backoff struct {
	Min, Max time.Duration
	next     time.Duration
}

// Failed records a run that began at started and failed, and returns the
// delay to wait before the next one.
func (b *Backoff) Failed(started time.Time) time.Duration {
	if b.next == 0 || time.Since(started) >= b.Max {
		b.next = b.Min
	}
	d := b.next
	b.next = min(b.next*2, b.Max)
	return d
}

// Sleep waits d, or until ctx is done (false). A d <= 0 returns true at
// once, without a timer (the rate limiter's and retry's common case).
// Every layer's context-bounded wait (providers' back-offs and polls,
// dataplane/middleware's delays) is this one.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
