package middleware

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// newRateLimit keeps a token bucket per source (sourceCriterion): it
// refills at c.Average tokens per c.Period (default 1s) and holds c.Burst
// tokens (default 1). A request that finds no token waits for one when the
// wait is short (at most half the time between two tokens, 500ms for rates
// under one per second, as Traefik), else it gets 429 with Retry-After
// (whole seconds) and X-Retry-In. Average 0 disables limiting.
//
// Buckets live in the built middleware (one configuration generation). A
// bucket idle long enough to have refilled completely is equivalent to a
// new one and is dropped by a sweep that runs at most once per refill time,
// on the request path, so nothing runs in the background.
//
// With c.Redis the buckets live in Redis instead (newRedisRateLimit), so
// every instance sharing it enforces one limit.
// Source: https://doc.traefik.io/traefik/middlewares/http/ratelimit/
func newRateLimit(name string, c *config.RateLimit, res Resolver) (Middleware, error) {
	rl, err := newRateLimitState(c)
	if err != nil {
		return nil, err
	}
	if rl == nil {
		return func(next http.Handler) http.Handler { return next }, nil
	}
	if c.Redis != nil {
		return newRedisRateLimit(name, c.Redis, rl, res)
	}
	return rl.wrap, nil
}

// newRateLimitState validates c and returns the limiter, nil when c.Average
// is 0 (no limit).
func newRateLimitState(c *config.RateLimit) (*rateLimiter, error) {
	if c.Average < 0 {
		return nil, errField("average", "%d is negative", c.Average)
	}
	if c.Burst < 0 {
		return nil, errField("burst", "%d is negative", c.Burst)
	}
	if c.Period < 0 {
		return nil, errField("period", "%s is negative", c.Period)
	}
	src, err := newSource(c.SourceCriterion)
	if err != nil {
		return nil, err
	}
	if c.Average == 0 {
		return nil, nil
	}
	period := c.Period.D()
	if period == 0 {
		period = time.Second
	}
	burst := int(c.Burst)
	if burst == 0 {
		burst = 1
	}
	perSec := float64(c.Average) / period.Seconds()
	maxDelay := 500 * time.Millisecond
	if perSec >= 1 {
		maxDelay = time.Duration(float64(time.Second) / (perSec * 2))
	}
	rl := &rateLimiter{
		src:      src,
		limit:    rate.Limit(perSec),
		burst:    burst,
		maxDelay: maxDelay,
		buckets:  map[string]*bucket{},
		idle:     time.Duration(float64(burst)/perSec*float64(time.Second)) + time.Second,
	}
	return rl, nil
}

type rateLimiter struct {
	src       sourceFunc
	limit     rate.Limit
	burst     int
	maxDelay  time.Duration
	idle      time.Duration // a bucket unused this long is full again
	mu        sync.RWMutex
	buckets   map[string]*bucket
	lastSweep atomic.Int64 // unix ns
}

type bucket struct {
	lim  *rate.Limiter
	seen atomic.Int64 // unix ns of the last request
}

func (rl *rateLimiter) get(key []byte, now time.Time) *bucket {
	rl.mu.RLock()
	b, ok := rl.buckets[string(key)]
	rl.mu.RUnlock()
	if !ok {
		rl.mu.Lock()
		if b, ok = rl.buckets[string(key)]; !ok {
			b = &bucket{lim: rate.NewLimiter(rl.limit, rl.burst)}
			b.seen.Store(now.UnixNano()) // before the sweep can see it
			rl.buckets[string(key)] = b
		}
		rl.mu.Unlock()
		rl.sweep(now)
	}
	b.seen.Store(now.UnixNano())
	return b
}

// sweep drops buckets idle for longer than rl.idle, at most once per rl.idle.
func (rl *rateLimiter) sweep(now time.Time) {
	last := rl.lastSweep.Load()
	if now.UnixNano()-last < int64(rl.idle) || !rl.lastSweep.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	cut := now.Add(-rl.idle).UnixNano()
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for k, b := range rl.buckets {
		if b.seen.Load() < cut {
			delete(rl.buckets, k)
		}
	}
}

func (rl *rateLimiter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		var buf [64]byte
		b := rl.get(rl.src(r, buf[:0]), now)
		if b.lim.AllowN(now, 1) {
			next.ServeHTTP(w, r)
			return
		}
		res := b.lim.ReserveN(now, 1)
		if !res.OK() {
			tooMany(w, rl.maxDelay)
			return
		}
		delay := res.DelayFrom(now)
		if delay > rl.maxDelay {
			res.CancelAt(now)
			tooMany(w, delay)
			return
		}
		if !providers.Sleep(r.Context(), delay) {
			res.Cancel()
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tooMany answers 429 with Retry-After (seconds, rounded up) and X-Retry-In.
func tooMany(w http.ResponseWriter, delay time.Duration) {
	w.Header().Set("Retry-After", strconv.FormatFloat(math.Ceil(delay.Seconds()), 'f', 0, 64))
	w.Header().Set("X-Retry-In", delay.String())
	http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
}
