package middleware

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/gantry-proxy/gantry/config"
)

// Circuit breaker defaults (Traefik v3).
const (
	defaultCheckPeriod      = 100 * time.Millisecond
	defaultFallbackDuration = 10 * time.Second
	defaultRecoveryDuration = 10 * time.Second
)

// newCircuitBreaker watches the responses of the next handler over a
// rolling 10-second window and, when c.Expression holds (checked at most
// once per checkPeriod, default 100ms), trips: for fallbackDuration
// (default 10s) every request gets c.ResponseCode (default 503) without
// reaching the service. Then it recovers over recoveryDuration (default
// 10s), letting a linearly growing share of requests through and tripping
// again if the expression holds; after that it is closed again with fresh
// statistics. Each router using the middleware has its own breaker and
// window (case 044: a tripped breaker on one router leaves the others
// alone); the state starts closed with each configuration generation.
//
// The expression uses expr syntax (&&, ||, !, comparisons, arithmetic)
// over NetworkErrorRatio() (share of 502 and 504 answers),
// ResponseCodeRatio(from, to, dividedFrom, dividedTo) (answers with status
// in [from, to) divided by answers in [dividedFrom, dividedTo)) and
// LatencyAtQuantileMS(q) (latency in ms at quantile q, 0–100), e.g.
// "NetworkErrorRatio() > 0.5 || LatencyAtQuantileMS(50.0) > 100".
// Source: https://doc.traefik.io/traefik/middlewares/http/circuitbreaker/
func newCircuitBreaker(c *config.CircuitBreaker) (Middleware, error) {
	if c.Expression == "" {
		return nil, errEmpty("expression")
	}
	prog, err := expr.Compile(c.Expression, expr.Env(&cbEnv{}), expr.AsBool())
	if err != nil {
		return nil, errField("expression", "%q: %w", c.Expression, err)
	}
	cb := &breaker{
		prog:     prog,
		check:    orDefault(c.CheckPeriod.D(), defaultCheckPeriod),
		fallback: orDefault(c.FallbackDuration.D(), defaultFallbackDuration),
		recovery: orDefault(c.RecoveryDuration.D(), defaultRecoveryDuration),
		code:     c.ResponseCode,
	}
	for _, d := range []struct {
		f string
		v time.Duration
	}{{"checkPeriod", c.CheckPeriod.D()}, {"fallbackDuration", c.FallbackDuration.D()}, {"recoveryDuration", c.RecoveryDuration.D()}} {
		if d.v < 0 {
			return nil, errField(d.f, "%s is negative", d.v)
		}
	}
	switch {
	case cb.code == 0:
		cb.code = http.StatusServiceUnavailable
	case cb.code < 100 || cb.code > 599:
		return nil, errField("responseCode", "%d is not an HTTP status", cb.code)
	}
	// One breaker per use, as Traefik builds one per router × middleware
	// (case 044): two routers naming the same middleware trip apart.
	return func(next http.Handler) http.Handler {
		b := &breaker{prog: cb.prog, check: cb.check, fallback: cb.fallback, recovery: cb.recovery, code: cb.code}
		return b.wrap(next)
	}, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

type cbState int

const (
	cbClosed cbState = iota
	cbTripped
	cbRecovering
)

type breaker struct {
	prog                      *vm.Program
	check, fallback, recovery time.Duration
	code                      int

	mu        sync.Mutex
	state     cbState
	until     time.Time // end of the tripped or recovering phase
	recStart  time.Time
	lastCheck time.Time
	win       window
}

// allow reports whether a request may go to the service now.
func (b *breaker) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case cbTripped:
		if now.Before(b.until) {
			return false
		}
		// Recovery began when the fallback ended, even if no request came then.
		b.state, b.recStart = cbRecovering, b.until
		b.until = b.recStart.Add(b.recovery)
		b.win.reset()
		fallthrough
	case cbRecovering:
		if !now.Before(b.until) {
			b.state = cbClosed
			b.win.reset()
			return true
		}
		share := float64(now.Sub(b.recStart)) / float64(b.recovery)
		return rand.Float64() < share
	}
	return true
}

// record adds one finished request and trips when the expression holds.
func (b *breaker) record(now time.Time, code int, latency time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.win.add(now, code, latency)
	if b.state == cbTripped || now.Sub(b.lastCheck) < b.check {
		return
	}
	b.lastCheck = now
	out, err := expr.Run(b.prog, &cbEnv{w: &b.win, now: now})
	if err == nil && out.(bool) {
		b.state, b.until = cbTripped, now.Add(b.fallback)
		b.win.reset()
	}
}

func (b *breaker) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if !b.allow(start) {
			http.Error(w, http.StatusText(b.code), b.code)
			return
		}
		sw := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		now := time.Now()
		b.record(now, sw.status(), now.Sub(start))
	})
}

// statusRecorder remembers the status code written through it.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 && (code < 100 || code >= 200 || code == http.StatusSwitchingProtocols) {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Flush() {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}

// cbEnv is the environment of a circuit-breaker expression.
type cbEnv struct {
	w   *window
	now time.Time
}

// NetworkErrorRatio is the share of 502 and 504 answers in the window.
func (e *cbEnv) NetworkErrorRatio() float64 {
	total, netErr := e.w.counts(e.now, func(code int) bool {
		return code == http.StatusBadGateway || code == http.StatusGatewayTimeout
	})
	if total == 0 {
		return 0
	}
	return float64(netErr) / float64(total)
}

// ResponseCodeRatio is the count of answers with status in [from, to)
// divided by the count of those in [dividedFrom, dividedTo); 0 when the
// latter is 0.
func (e *cbEnv) ResponseCodeRatio(from, to, dividedFrom, dividedTo int) float64 {
	_, num := e.w.counts(e.now, func(c int) bool { return c >= from && c < to })
	_, den := e.w.counts(e.now, func(c int) bool { return c >= dividedFrom && c < dividedTo })
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

// LatencyAtQuantileMS is the latency in milliseconds at quantile q (0–100).
func (e *cbEnv) LatencyAtQuantileMS(q float64) float64 {
	return e.w.quantile(e.now, q)
}
