package consul

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/providers"
)

// Backoff bounds for failed Consul requests: the delay doubles from
// backoffMin to backoffMax, with ±20% jitter.
const (
	backoffMin = 100 * time.Millisecond
	backoffMax = 5 * time.Second
)

// backoff returns the delay before retry number n (1-based).
func backoff(n int) time.Duration {
	d := backoffMin
	for i := 1; i < n && d < backoffMax; i++ {
		d *= 2
	}
	d = min(d, backoffMax)
	return d - d/5 + rand.N(2*d/5+1)
}

// fetchFunc runs one Consul query with q (whose context is set) and returns
// its result and metadata.
type fetchFunc[T any] func(q *api.QueryOptions) (T, *api.QueryMeta, error)

// watchSpec says how to repeat one query.
type watchSpec struct {
	// base holds the consistency options (stale, cache, consistent); it is
	// copied for each request.
	base api.QueryOptions
	// wait is the blocking-query wait time.
	wait time.Duration
	// poll, when positive, turns blocking queries off: the query runs
	// without WaitIndex every poll (Traefik's watch=false, refreshInterval).
	poll time.Duration
	// slots and quick, when not nil, bound the requests in flight across
	// every watch sharing them: blocking queries (which hold a connection
	// for up to wait) take a slot, other requests (first reads, retries,
	// polls) a quick one, so that a full set of blocking queries never
	// delays a first read.
	slots, quick chan struct{}
}

// watch repeats fetch until ctx is done, following Consul's blocking-query
// rules (https://developer.hashicorp.com/consul/api-docs/features/blocking):
// WaitIndex is the last index seen, reset to 0 when the index goes
// backwards or after an error, so that a restarted or recovered agent is
// re-read in full (case 019). Each request has a deadline of wait+wait/16
// plus slack, so a dead connection is noticed.
//
// onData is called with every result whose index differs from the previous
// one, the first result, and the first result after an error. onErr is called
// with every failed request (never after ctx is done); retries back off
// exponentially. Both run on watch's goroutine. watch returns when ctx is
// done.
func watch[T any](ctx context.Context, s watchSpec, fetch fetchFunc[T], onData func(T), onErr func(error)) {
	var idx uint64
	failures := 0
	for ctx.Err() == nil {
		q := s.base
		if s.poll <= 0 {
			q.WaitIndex, q.WaitTime = idx, s.wait
		}
		pool := s.quick
		if q.WaitIndex > 0 {
			pool = s.slots
		}
		if pool != nil {
			select {
			case pool <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
		rctx, cancel := context.WithTimeout(ctx, requestTimeout(s.wait))
		v, meta, err := fetch(q.WithContext(rctx))
		cancel()
		if pool != nil {
			<-pool
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			idx = 0
			onErr(err)
			if !providers.Sleep(ctx, backoff(failures)) {
				return
			}
			continue
		}
		next := meta.LastIndex
		changed := idx == 0 || next != idx
		switch {
		case next < idx:
			next = 0 // index went backwards (agent restarted or snapshot restored)
		case next == 0:
			next = 1 // never block on index 0 twice in a row
		}
		failures = 0
		idx = next
		if changed {
			onData(v)
		}
		if s.poll > 0 && !providers.Sleep(ctx, s.poll) {
			return
		}
	}
}
