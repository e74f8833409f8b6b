// Package ctxtime holds the waits that every layer of Gantry bounds by a
// context (a retry's back-off, a provider's poll, a rate limiter's delay).
// It imports nothing of Gantry's, so config, providers, dataplane and the
// commands may all use it.
package ctxtime

import (
	"context"
	"time"
)

// Sleep waits d, or not at all when d <= 0, and reports whether it did:
// false when ctx ended first (the client went away, the provider stops).
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
