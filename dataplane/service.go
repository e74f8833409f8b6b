package dataplane

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/balance"
	"github.com/gantry-proxy/gantry/dataplane/middleware"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/dataplane/upstream"
)

// lbHandler is a loadBalancer service: pick a server, proxy to it, feed
// passive health. With no available server it answers 503 "no available
// server", like Traefik (case 032).
type lbHandler struct {
	name string
	// targets are the servers with weight > 0, in configuration order:
	// the picker's and the sticky cookie's indexes are into it.
	targets []*target
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
		ex = getExchange(nil)
		defer putExchange(ex)
	}
	a := middleware.AttemptOf(r.Context())
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

// other picks an available server other than target i, or -1.
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

// attempt forwards r to target i once: begin() counts it in flight, and
// the deferred done() ends it whatever happens (an aborted response panics
// through it).
func (h *lbHandler) attempt(ex *exchange, i int, w http.ResponseWriter, r *http.Request) (res upstream.Result) {
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
func (h *lbHandler) done(ex *exchange, i int, r *http.Request, res *upstream.Result, start time.Time) {
	t := h.targets[i]
	b := t.Backend
	b.End()
	ex.ttfb = res.TTFB
	if n := len(ex.attempts); n > 0 {
		a := &ex.attempts[n-1]
		a.Duration, a.Status = time.Since(start), res.Status
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

// weightedHandler splits requests over child services by weight with the
// smooth WRR sequence; children that report no available server are
// skipped. All skipped → 503.
type weightedHandler struct {
	children []http.Handler
	seq      []int32
	next     atomic.Uint64
	sticky   *balance.ChildSticky // weighted.sticky.cookie; nil when unset
}

// Available implements balance.Availabler.
func (h *weightedHandler) Available() bool {
	for _, i := range h.seq {
		if balance.Available(h.children[i]) {
			return true
		}
	}
	return false
}

func (h *weightedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.sticky != nil {
		if i, rewrite := h.sticky.Lookup(r); i >= 0 && balance.Available(h.children[i]) {
			if rewrite {
				h.sticky.Set(w, i)
			}
			h.children[i].ServeHTTP(w, r)
			return
		}
	}
	n := uint64(len(h.seq))
	if n > 0 {
		for range n {
			i := h.seq[(h.next.Add(1)-1)%n]
			if c := h.children[i]; balance.Available(c) {
				if h.sticky != nil {
					h.sticky.Set(w, int(i))
				}
				c.ServeHTTP(w, r)
				return
			}
		}
	}
	http.Error(w, "no available server", http.StatusServiceUnavailable)
}

// mirrorHandler sends every request to main and a share of them to each
// mirror, discarding the mirrors' answers. Mirror requests run in
// goroutines owned by the Pool: they are not cancelled when the client's
// request ends, and Pool.Close cancels and joins them.
// Source: https://doc.traefik.io/traefik/routing/services/#mirroring-service
type mirrorHandler struct {
	main       http.Handler
	mirrors    []*mirror
	mirrorBody bool
	maxBody    int64 // bytes; < 0 unlimited
	pool       *balance.Pool
}

type mirror struct {
	h       http.Handler
	percent uint64
	count   atomic.Uint64
}

// due reports whether this request goes to m: exactly percent of every 100
// requests do, spread evenly.
func (m *mirror) due() bool {
	n := m.count.Add(1)
	return (n*m.percent)/100 != ((n-1)*m.percent)/100
}

// Available implements balance.Availabler.
func (h *mirrorHandler) Available() bool { return balance.Available(h.main) }

func (h *mirrorHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var due []*mirror
	for _, m := range h.mirrors {
		if m.due() {
			due = append(due, m)
		}
	}
	if len(due) == 0 {
		h.main.ServeHTTP(w, r)
		return
	}
	var body []byte
	if r.Body != nil && r.Body != http.NoBody && h.mirrorBody {
		limit := h.maxBody
		var buf bytes.Buffer
		var err error
		if limit < 0 {
			_, err = buf.ReadFrom(r.Body)
		} else {
			_, err = buf.ReadFrom(io.LimitReader(r.Body, limit+1))
		}
		if err != nil {
			http.Error(w, "bad request body", http.StatusBadRequest)
			return
		}
		body = buf.Bytes()
		if limit >= 0 && int64(len(body)) > limit {
			// Too big to mirror: serve main with the whole body, skip mirrors.
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			h.main.ServeHTTP(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	for _, m := range due {
		// The mirror outlives the client's request but not the Pool, and
		// shares none of the request's context values (observer record).
		mr := r.Clone(h.pool.Context())
		if body != nil {
			mr.Body = io.NopCloser(bytes.NewReader(body))
		} else {
			mr.Body = http.NoBody
			mr.ContentLength = 0
		}
		h.pool.Go(func() { m.h.ServeHTTP(discardWriter{h: http.Header{}}, mr) })
	}
	h.main.ServeHTTP(w, r)
}

// discardWriter is the ResponseWriter of mirror requests.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header       { return d.h }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}
