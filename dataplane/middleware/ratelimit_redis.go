package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// Releaser is an optional capability of a Resolver: OnRelease registers f
// to run when the generation that built the middleware is retired
// (generation.Generation). The Redis rate limiter releases its client so.
type Releaser interface {
	OnRelease(f func())
}

// redisBucketScript is one token-bucket step, atomic in Redis. It has the
// semantics of Traefik v3.4's Redis limiter (a bucket of burst tokens
// refilled at rate per microsecond; a request takes one token, waits
// -tokens/rate when the bucket is short, and is refused, the token left,
// when that wait exceeds maxDelay) with one difference: the time is
// Redis's clock (TIME), not each instance's, so instances with skewed
// clocks share one bucket correctly.
//
// KEYS[1] bucket hash {tokens, last(µs)}; ARGV rate (tokens/µs), burst,
// ttl (s), maxDelay (µs). Returns {admitted 0|1, wait µs as a string}.
const redisBucketScript = `
local rate, burst, ttl, maxdelay = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000000 + tonumber(now[2])
local st = redis.call('HMGET', KEYS[1], 'tokens', 'last')
local tokens, last = tonumber(st[1]), tonumber(st[2])
if tokens == nil or last == nil then
  tokens, last = burst, t
end
if last > t then last = t end
tokens = math.min(burst, tokens + (t - last) * rate) - 1
local wait, ok = 0, 1
if tokens < 0 then
  wait = -tokens / rate
  if wait > maxdelay then
    tokens, ok = tokens + 1, 0
  end
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'last', tostring(t))
redis.call('EXPIRE', KEYS[1], ttl)
return {ok, tostring(wait)}
`

var bucketScript = redis.NewScript(redisBucketScript)

// redisKeyPrefix prefixes every bucket key: "gantry:rate:<middleware
// name>:<source>" (Traefik v3.4: "rate:<middleware name>:<source>"), so
// two middlewares sharing a Redis keep separate buckets.
const redisKeyPrefix = "gantry:rate:"

// redisLimiter is a rate limiter whose buckets live in Redis.
type redisLimiter struct {
	client   redis.UniversalClient
	shared   *sharedClient // health reports; nil in tests
	prefix   string
	src      sourceFunc
	perMicro float64 // tokens per µs
	burst    int
	ttl      int // seconds: time to refill a bucket completely, + 1
	maxDelay time.Duration
	timeout  time.Duration // decisionTimeout
	lastLog  atomic.Int64  // unix ns of the last outage log line
}

// newRedisRateLimit builds the Redis-backed rateLimit: rl holds the
// validated rate, burst, source and maxDelay (newRateLimitState).
// On a Redis error (down, timeout) the request gets 500, as in Traefik
// v3.4 (its middleware answers 500 when the limiter errs); an error is
// logged at most once per second.
func newRedisRateLimit(name string, c *config.RateLimitRedis, rl *rateLimiter, res Resolver) (Middleware, error) {
	opts, err := redisOptions(c)
	if err != nil {
		return nil, err
	}
	sc, release, err := redisClients.acquire(opts, c)
	if err != nil {
		return nil, err
	}
	if rel, ok := res.(Releaser); ok {
		rel.OnRelease(release)
	}
	l := &redisLimiter{
		client:   sc.c,
		shared:   sc,
		prefix:   redisKeyPrefix + name + ":",
		src:      rl.src,
		perMicro: float64(rl.limit) / 1e6,
		burst:    rl.burst,
		ttl:      int(rl.idle/time.Second) + 1,
		maxDelay: rl.maxDelay,
		timeout:  decisionTimeout(c),
	}
	return l.wrap, nil
}

func redisOptions(c *config.RateLimitRedis) (*redis.UniversalOptions, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"db", c.DB}, {"poolSize", c.PoolSize}, {"minIdleConns", c.MinIdleConns}, {"maxActiveConns", c.MaxActiveConns}} {
		if f.v < 0 {
			return nil, errField("redis."+f.name, "%d is negative", f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    config.Duration
	}{{"readTimeout", c.ReadTimeout}, {"writeTimeout", c.WriteTimeout}, {"dialTimeout", c.DialTimeout}} {
		if f.v < 0 {
			return nil, errField("redis."+f.name, "%s is negative", f.v.D())
		}
	}
	eps := c.Endpoints
	if len(eps) == 0 {
		eps = []string{"localhost:6379"}
	}
	for i, ep := range eps {
		if ep == "" {
			return nil, errField("redis.endpoints["+strconv.Itoa(i)+"]", "empty")
		}
	}
	// No retries (go-redis retries 3 times by default, with backoff: a
	// hung Redis held each request 20.1 s), and the request's context
	// deadline (decisionTimeout) bounds every wait: dial, pool, I/O. The
	// pool's own dial, which goes on in the background after the decision
	// gave up, is tried once too (go-redis tries it 5 times by default: an
	// unreachable Redis cost 5 dials per rate-limited request).
	o := &redis.UniversalOptions{
		Addrs: eps, Username: c.Username, Password: c.Password, DB: c.DB,
		PoolSize: c.PoolSize, MinIdleConns: c.MinIdleConns, MaxActiveConns: c.MaxActiveConns,
		ReadTimeout: c.ReadTimeout.D(), WriteTimeout: c.WriteTimeout.D(), DialTimeout: c.DialTimeout.D(),
		MaxRetries: -1, DialerRetries: 1, ContextTimeoutEnabled: true,
	}
	if c.TLS != nil {
		tc, err := clientTLSConfig(c.TLS)
		if err != nil {
			return nil, fmt.Errorf("redis.%w", err)
		}
		o.TLSConfig = tc
	}
	return o, nil
}

func (l *redisLimiter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf [64]byte
		key := l.prefix + string(l.src(r, buf[:0]))
		ok, wait, err := l.take(r.Context(), key)
		if err != nil && r.Context().Err() != nil {
			return // the client went away
		}
		if l.shared != nil {
			l.shared.report(err)
		}
		if err != nil {
			l.logOutage(err)
			http.Error(w, "rate limit: the Redis backend is unavailable", http.StatusInternalServerError)
			return
		}
		if !ok {
			tooMany(w, wait)
			return
		}
		if !providers.Sleep(r.Context(), wait) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// defaultRedisReadTimeout is go-redis's readTimeout when unset.
const defaultRedisReadTimeout = 3 * time.Second

// decisionTimeout bounds one rate-limit decision, all of it (connecting,
// waiting for a pooled connection, EVALSHA and a NOSCRIPT fallback):
// redis.readTimeout, 3 s by default, as README promises.
func decisionTimeout(c *config.RateLimitRedis) time.Duration {
	if d := c.ReadTimeout.D(); d > 0 {
		return d
	}
	return defaultRedisReadTimeout
}

// take runs one bucket step for key in Redis, within l.timeout.
func (l *redisLimiter) take(ctx context.Context, key string) (ok bool, wait time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	v, err := bucketScript.Run(ctx, l.client, []string{key},
		strconv.FormatFloat(l.perMicro, 'g', -1, 64), l.burst, l.ttl, l.maxDelay.Microseconds()).Slice()
	if err != nil {
		return false, 0, err
	}
	if len(v) != 2 {
		return false, 0, fmt.Errorf("rate limit script: %d values, want 2", len(v))
	}
	admitted, _ := v[0].(int64)
	ws, _ := v[1].(string)
	us, err := strconv.ParseFloat(ws, 64)
	if err != nil {
		return false, 0, fmt.Errorf("rate limit script: wait %q: %w", ws, err)
	}
	return admitted == 1, time.Duration(us * float64(time.Microsecond)), nil
}

func (l *redisLimiter) logOutage(err error) {
	now := time.Now().UnixNano()
	last := l.lastLog.Load()
	if now-last < int64(time.Second) || !l.lastLog.CompareAndSwap(last, now) {
		return
	}
	slog.Warn("rateLimit: Redis unavailable, answering 500", "prefix", l.prefix, "error", err)
}

// redisClients shares one client among the middlewares (and generations)
// with the same options, so a reload reuses the connections; a client is
// closed redisCloseDelay after its last user's generation is retired, so
// requests still running on that generation finish with it.
var redisClients = &clientRegistry{m: map[string]*sharedClient{}}

const (
	redisCloseDelay = 30 * time.Second
	// maxRedisClients bounds the distinct Redis configurations live at once
	// (each holds a connection pool); labels can set these options.
	maxRedisClients = 64
)

type clientRegistry struct {
	mu sync.Mutex
	m  map[string]*sharedClient
}

type sharedClient struct {
	c     redis.UniversalClient
	name  string // "redis <endpoints>"
	refs  int
	timer *time.Timer

	health    atomic.Int32 // healthUnknown, healthOK or healthDown
	hmu       sync.Mutex   // guards the last error
	lastErr   string
	lastErrAt time.Time
}

const (
	healthUnknown int32 = iota
	healthOK
	healthDown
)

// report records the outcome of one decision: the backend's state (a
// success costs one atomic load).
func (sc *sharedClient) report(err error) {
	if err == nil {
		if sc.health.Load() != healthOK {
			sc.health.Store(healthOK)
		}
		return
	}
	sc.hmu.Lock()
	sc.lastErr, sc.lastErrAt = err.Error(), time.Now()
	sc.hmu.Unlock()
	sc.health.Store(healthDown)
}

// Backends returns the state of every Redis the rate limiters use, keyed
// "redis <endpoints>": "down" (the last decision failed, with its error)
// or "ok", from requests (no probing: a Redis not used yet says
// "starting"). The API shows them with the providers and a down one in
// /api/problems (issue 23).
func Backends() map[string]providers.SourceState {
	redisClients.mu.Lock()
	defer redisClients.mu.Unlock()
	out := map[string]providers.SourceState{}
	for _, sc := range redisClients.m {
		sc.hmu.Lock()
		st := providers.SourceState{LastError: sc.lastErr, LastErrorAt: sc.lastErrAt}
		sc.hmu.Unlock()
		switch sc.health.Load() {
		case healthOK:
			st.State = providers.StateOK
		case healthDown:
			st.State = providers.StateDown
		default:
			st.State = providers.StateStarting
		}
		if prev, ok := out[sc.name]; ok && prev.State == providers.StateDown {
			continue // the same endpoints with other options: any down is down
		}
		out[sc.name] = st
	}
	return out
}

func (reg *clientRegistry) acquire(o *redis.UniversalOptions, c *config.RateLimitRedis) (*sharedClient, func(), error) {
	kb, err := json.Marshal(c)
	if err != nil {
		return nil, nil, err
	}
	key := string(kb)
	reg.mu.Lock()
	defer reg.mu.Unlock()
	sc := reg.m[key]
	if sc == nil {
		if len(reg.m) >= maxRedisClients {
			return nil, nil, errors.New("redis: too many distinct Redis configurations (64) in use")
		}
		sc = &sharedClient{c: redis.NewUniversalClient(o), name: "redis " + strings.Join(o.Addrs, ",")}
		reg.m[key] = sc
	}
	if sc.timer != nil {
		sc.timer.Stop()
		sc.timer = nil
	}
	sc.refs++
	var once sync.Once
	return sc, func() { once.Do(func() { reg.release(key, sc) }) }, nil
}

func (reg *clientRegistry) release(key string, sc *sharedClient) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	sc.refs--
	if sc.refs > 0 {
		return
	}
	sc.timer = time.AfterFunc(redisCloseDelay, func() {
		reg.mu.Lock()
		defer reg.mu.Unlock()
		if sc.refs == 0 && reg.m[key] == sc {
			delete(reg.m, key)
			_ = sc.c.Close()
		}
	})
}
