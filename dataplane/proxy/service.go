package proxy

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/balance"
	"github.com/gantry-proxy/gantry/dataplane/middleware"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/dataplane/upstream"
)

// LoadBalancer describes a loadBalancer service for NewLoadBalancer.
type LoadBalancer struct {
	Name string // the qualified service name, for logs
	// Targets are the servers with weight > 0, in configuration order;
	// URLs[i] is the URL of Targets[i] as configured (sticky cookie
	// values).
	Targets []*Target
	URLs    []string
	Servers int // every configured server, weight 0 too
	// Strategy is loadBalancer.strategy: "" or "wrr", "p2c", "hrw",
	// "leasttime" (checked by the caller).
	Strategy string
	// Sticky is the loadBalancer.sticky.cookie template
	// (balance.CookieTemplate); nil: no sticky sessions.
	Sticky *http.Cookie
	Pool   *balance.Pool // the servers' long-lived state
	Log    *slog.Logger
}

// NewLoadBalancer returns the handler of a loadBalancer service: pick a
// server with the strategy's picker (sticky cookie first), forward to it
// through package upstream, feed passive health and leasttime. With no
// available server it answers 503 "no available server", like Traefik
// (case 032). It is a balance.Availabler.
func NewLoadBalancer(o LoadBalancer) http.Handler {
	h := &lbHandler{name: o.Name, targets: o.Targets, servers: o.Servers, pool: o.Pool, log: o.Log}
	servers := make([]*balance.Server, len(o.Targets))
	for i, t := range o.Targets {
		servers[i] = &t.Server
	}
	switch o.Strategy {
	case "p2c":
		h.picker = balance.NewP2C(servers)
	case "hrw":
		h.picker = balance.NewHRW(servers)
	case "leasttime":
		stats := make([]*balance.Latency, len(servers))
		for i, s := range servers {
			stats[i] = o.Pool.Latency(s.Backend)
		}
		lt := balance.NewLeastTime(servers, stats)
		h.picker, h.leastTime = lt, lt
	default:
		h.picker = balance.NewWRR(servers)
	}
	if o.Sticky != nil {
		h.sticky = balance.NewSticky(o.Name, *o.Sticky, servers, o.URLs)
	}
	return h
}

// lbHandler is a loadBalancer service (NewLoadBalancer).
type lbHandler struct {
	name string
	// targets are the servers with weight > 0, in configuration order:
	// the picker's and the sticky cookie's indexes are into it.
	targets []*Target
	servers int // every configured server, weight 0 too
	picker  balance.Picker
	// leastTime is picker when the strategy is leasttime: forward feeds it
	// each attempt's time to first byte.
	leastTime *balance.LeastTime
	sticky    *balance.Sticky
	pool      *balance.Pool
	log       *slog.Logger
}

// Available implements balance.Availabler.
func (h *lbHandler) Available() bool {
	for _, t := range h.targets {
		if t.Available() {
			return true
		}
	}
	return false
}

// maxDialRetries caps how many other servers a request is retried on after
// a dial error (design.md §2.5: only dial errors, only without a body).
const maxDialRetries = 2

func (h *lbHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := -1
	if h.sticky != nil {
		var rewrite bool
		if i, rewrite = h.sticky.Lookup(r); rewrite {
			h.sticky.Set(w, i)
		}
	}
	if i < 0 {
		var err error
		if i, err = h.picker.Pick(r); err != nil {
			http.Error(w, "no available server", http.StatusServiceUnavailable)
			return
		}
		if h.sticky != nil {
			h.sticky.Set(w, i)
		}
	}
	ex := exchangeOf(w)
	if ex == nil {
		ex = GetExchange(nil)
		defer PutExchange(ex)
	}
	a := middleware.AttemptOf(w)
	if a.IsRetry() {
		ex.retries++ // a retry middleware's try
	}
	retries := 0
	if r.Body == nil || r.Body == http.NoBody {
		retries = min(maxDialRetries, len(h.targets)-1)
	}
	for {
		a.Reached()
		t := h.targets[i]
		res := h.attempt(ex, i, w, r)
		if res.Err == nil {
			return
		}
		// A connection to t that could not be opened: nothing reached the
		// server or the client, so another server may take the request.
		dial := upstream.IsDialError(res.Err)
		if retries > 0 && dial && r.Context().Err() == nil {
			if next := h.other(r, i); next >= 0 {
				retries--
				ex.retries++
				if h.sticky != nil {
					h.sticky.Set(w, next)
				}
				i = next
				continue
			}
		}
		if res.Sent {
			// The response head went out: a broken body must never look
			// complete, so the client's response is aborted (the HTTP/1.1
			// server closes without a terminating chunk, HTTP/2 resets the
			// stream).
			logForward(h.log, r, t, res.Status, res.Err)
			panic(http.ErrAbortHandler)
		}
		if dial {
			// The one network error the retry middleware may repeat
			// (Traefik v3.7, case 040): no byte reached the server.
			a.NothingSent()
		}
		code := answerError(w, r, res.Err)
		logForward(h.log, r, t, code, res.Err)
		return
	}
}

// other picks an available server other than Target i, or -1.
func (h *lbHandler) other(r *http.Request, i int) int {
	for range h.servers {
		n, err := h.picker.Pick(r)
		if err != nil {
			return -1
		}
		if n != i {
			return n
		}
	}
	return -1
}

// attempt forwards r to Target i once: begin() counts it in flight, and
// the deferred done() ends it whatever happens (an aborted response panics
// through it).
func (h *lbHandler) attempt(ex *Exchange, i int, w http.ResponseWriter, r *http.Request) (res upstream.Result) {
	t := h.targets[i]
	ex.upstream = t.name
	start := time.Now()
	t.Backend.Begin()
	ex.attempts = append(ex.attempts, observe.Attempt{Upstream: t.name, Start: start})
	defer func() {
		h.done(ex, i, r, &res, start)
		if ex.trace != nil {
			ex.trace.AttemptDone(ex.attempts[len(ex.attempts)-1].Status, w.Header(), res.Err)
		}
	}()
	t.outbound(&ex.out, r)
	ex.out.Start = start
	ex.trace.Attempt(r, t.name) // the ReverseProxy span of this try; traceparent names it
	res = t.host.Forward(w, &ex.out)
	ex.out.Req = nil
	return res
}

// done ends one attempt begun on t: in-flight -1, passive health charged
// for a failure of the server (transport error, timeout, malformed or
// broken response; not an HTTP status, in the manner of nginx's
// max_fails, and never the client's own failure), cleared by a success,
// and leasttime fed the time to first byte. It is the one place every
// finished attempt is counted.
func (h *lbHandler) done(ex *Exchange, i int, r *http.Request, res *upstream.Result, start time.Time) {
	t := h.targets[i]
	b := t.Backend
	b.End()
	ex.ttfb = res.TTFB
	if n := len(ex.attempts); n > 0 {
		a := &ex.attempts[n-1]
		end := res.End // Forward's clock reading at the end, when it made one
		if end.IsZero() {
			end = time.Now()
		}
		a.Duration, a.Status = end.Sub(start), res.Status
		if res.Err != nil && (res.Status == 0 || !res.Sent) {
			a.Status = statusForError(r, res.Err)
		}
	}
	if h.leastTime != nil {
		h.leastTime.Record(i, res.TTFB, res.Err, start)
	}
	switch {
	case serverFault(r, res.Err):
		if h.pool.Failed(b, t.Passive, res.Err) {
			h.log.Warn("server down (passive health check)", "service", h.name, "backend", b.Key(), "error", res.Err)
		}
	case res.Err == nil:
		b.Succeeded()
	}
}
