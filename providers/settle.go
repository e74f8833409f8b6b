package providers

import (
	"context"
	"time"
)

// Settle waits for a burst of events to end, so that it costs one reload
// read once it is over: it consumes events until none has arrived for the
// quiet window, or until limit has passed since the call, and returns true;
// it returns false when ctx is done first. window, when not nil, gives the
// quiet window to wait after each event (a removal may want a longer one);
// otherwise it stays quiet. Used by the aggregator (publishes), the file
// provider and the static configuration's watcher (file system events).
func Settle[E any](ctx context.Context, events <-chan E, quiet, limit time.Duration, window func(E) time.Duration) bool {
	q := time.NewTimer(quiet)
	defer q.Stop()
	l := time.NewTimer(limit)
	defer l.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case ev := <-events:
			if window != nil {
				quiet = window(ev)
			}
			q.Reset(quiet)
		case <-q.C:
			return true
		case <-l.C:
			return true
		}
	}
}
