package balance

import (
	"errors"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// ErrNoBackend is returned by a service's picker when no server is
// available: every server is down, has weight 0, or the service has none.
// The service handler answers it with 503 "no available server", like
// Traefik (case 032).
var ErrNoBackend = errors.New("balance: no available backend")

// Backend is the state of one upstream URL (scheme://host:port, no path)
// shared by every generation and every service that uses it: the count of
// requests in flight and the passive health record. Its methods are safe for
// concurrent use and lock-free.
type Backend struct {
	// URL is the server's origin: scheme, host and port, without path.
	URL *url.URL
	key string

	inflight atomic.Int64
	// Passive health: failures counted since windowStart (unix ns); the
	// server is out of rotation until downUntil (unix ns).
	windowStart atomic.Int64
	failures    atomic.Int64
	downUntil   atomic.Int64
	lastErr     atomic.Pointer[string]

	refs int // guarded by Pool.mu
	// services counts references per qualified service name; guarded by Pool.mu.
	services map[string]int
}

// Key returns b's origin as a string: the key the Pool holds it under.
func (b *Backend) Key() string { return b.key }

// Begin counts one request in flight to b; End, deferred by the caller,
// ends it.
func (b *Backend) Begin() { b.inflight.Add(1) }

// End ends one request that Begin counted.
func (b *Backend) End() { b.inflight.Add(-1) }

// passiveUp reports whether passive health lets b take traffic at now
// (unix ns). It reads one atomic in the common case.
func (b *Backend) passiveUp(now func() int64) bool {
	d := b.downUntil.Load()
	return d == 0 || now() >= d
}

// Passive is a service's passiveHealthCheck, resolved to defaults.
type Passive struct {
	window      time.Duration
	maxFailures int64
}

// Passive health-check default (Traefik's).
const defaultFailureWindow = 10 * time.Second

// NewPassive resolves a service's passiveHealthCheck: failureWindow
// defaults to 10s, maxFailedAttempts below 1 to 1. A nil c is nil (no
// passive health).
func NewPassive(c *config.PassiveServerHealthCheck) *Passive {
	if c == nil {
		return nil
	}
	p := &Passive{window: orDefault(c.FailureWindow.D(), defaultFailureWindow), maxFailures: int64(c.MaxFailedAttempts)}
	if p.maxFailures <= 0 {
		p.maxFailures = 1
	}
	return p
}

// recordFailure notes a failed attempt (a transport error or timeout; not an
// HTTP status from the server, in the manner of nginx's max_fails) at now.
// After p.maxFailures failures within p.window the backend leaves rotation
// for p.window. It reports whether this call took the backend down.
func (b *Backend) recordFailure(p *Passive, now time.Time, err error) bool {
	msg := err.Error()
	b.lastErr.Store(&msg)
	if p == nil {
		return false
	}
	n := now.UnixNano()
	ws := b.windowStart.Load()
	if ws == 0 || n-ws > int64(p.window) {
		if b.windowStart.CompareAndSwap(ws, n) {
			b.failures.Store(0)
		}
	}
	if b.failures.Add(1) >= p.maxFailures {
		was := b.downUntil.Load()
		b.downUntil.Store(n + int64(p.window))
		b.failures.Store(0)
		b.windowStart.Store(0)
		return was == 0 || was <= n
	}
	return false
}

// Succeeded notes a successful attempt: it clears an expired passive
// verdict. Lock-free; it reads the clock only while a verdict stands.
func (b *Backend) Succeeded() {
	if d := b.downUntil.Load(); d != 0 && time.Now().UnixNano() >= d {
		b.downUntil.CompareAndSwap(d, 0)
	}
}
