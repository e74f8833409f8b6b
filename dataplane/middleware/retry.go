package middleware

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/dataplane/replay"
	"github.com/gantry-proxy/gantry/dataplane/statusrange"
	"github.com/gantry-proxy/gantry/providers"
)

// Attempt is what the proxy stage tells the retry middleware about one
// try. The retry middleware hands each try a fresh Attempt through the
// try's ResponseWriter (AttemptOf finds it, as http.ResponseController
// finds a Flusher: through Unwrap), never through the request's context;
// the service's forwarding code (package proxy) calls Reached when the try
// gets to a server's proxy and NothingSent, before writing its own error
// answer, when the connection to the server was never established, so no
// byte of the request reached it. Both are safe on a nil *Attempt and for
// concurrent use.
type Attempt struct {
	try             int // 0 for the first try
	reached, unsent atomic.Bool
}

// IsRetry reports whether this try repeats an earlier one (for the
// retries count of access logs and metrics). False on a nil *Attempt.
func (a *Attempt) IsRetry() bool { return a != nil && a.try > 0 }

// attemptCarrier is a try's writer: it carries the try's Attempt.
type attemptCarrier interface{ Attempt() *Attempt }

// AttemptOf returns the Attempt of the try that w belongs to, or nil
// outside a retry: the retry middleware's writer of the try, found in w's
// wrapper chain (writers that wrap another expose it through Unwrap).
func AttemptOf(w http.ResponseWriter) *Attempt {
	for range 16 {
		switch x := w.(type) {
		case attemptCarrier:
			return x.Attempt()
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
	return nil
}

// Reached records that the try reached the proxy stage (a server was
// picked): answers written before that (a 401 from an auth middleware, a
// 503 "no available server") are never network errors.
func (a *Attempt) Reached() {
	if a != nil {
		a.reached.Store(true)
		a.unsent.Store(false)
	}
}

// NothingSent records that the answer about to be written is the proxy's
// own for a connection that never opened.
func (a *Attempt) NothingSent() {
	if a != nil {
		a.unsent.Store(true)
	}
}

func (a *Attempt) networkRetryable() bool { return a.reached.Load() && a.unsent.Load() }

// newRetry is Traefik v3.7's retry middleware: up to c.Attempts tries in
// all, the last passed through untouched.
//
//   - Network errors (unless c.DisableRetryOnNetworkError): a try is
//     repeated when it reached a server's proxy and the connection failed
//     before any byte of the request was sent (the dial failed), for any
//     method; a reset or timeout after the request went out is answered
//     (502/504), never replayed.
//   - Status (c.Status, codes and ranges as in the errors middleware): a
//     try whose answer has a listed status is repeated, for idempotent
//     methods only unless c.RetryNonIdempotentMethod (POST, PATCH and LOCK
//     are not idempotent, as in Traefik). The body is kept for replay up to
//     c.MaxRequestBodyBytes (default 2 MiB, negative: unlimited); every try
//     gets the same bytes. A larger body disables status retries for that
//     request and is streamed once.
//   - Discarded tries leave nothing at the client: their headers (a
//     Set-Cookie, say) are dropped with them. 1xx answers are forwarded; a
//     101 or a hijacked connection ends retrying.
//   - Backoff: no wait when c.InitialInterval is 0; else the k-th wait
//     (k from 0) is InitialInterval × 2^(k/(Attempts-1)) ±50 % jitter, so
//     the nominal wait reaches twice InitialInterval at the last try (the
//     progression Traefik builds with cenkalti/backoff).
//   - c.Timeout (0: none): once it has elapsed since the first try, the
//     next answer goes to the client whatever it is.
//
// Each try re-enters the service, so the load balancer picks again. The
// request's headers are copied per try, so inner middlewares edit their
// own copy. Errors: Attempts < 1; negative InitialInterval or Timeout; an
// unparsable status; status empty with network retries disabled (nothing
// to retry on, as Traefik rejects it).
// Source: https://doc.traefik.io/traefik/middlewares/http/retry/ and
// pkg/middlewares/retry/retry.go (v3.7).
func newRetry(c *config.Retry) (Middleware, error) {
	if c.Attempts <= 0 {
		return nil, errField("attempts", "%d: want at least 1", c.Attempts)
	}
	if c.InitialInterval < 0 {
		return nil, errField("initialInterval", "%s is negative", c.InitialInterval)
	}
	if c.Timeout < 0 {
		return nil, errField("timeout", "%s is negative", c.Timeout)
	}
	ranges, err := parseStatusList("status", c.Status)
	if err != nil {
		return nil, err
	}
	if len(ranges) == 0 && c.DisableRetryOnNetworkError {
		return nil, errField("status", "empty while disableRetryOnNetworkError is set: nothing to retry on")
	}
	rt := &retrier{
		attempts: c.Attempts,
		initial:  c.InitialInterval.D(),
		timeout:  c.Timeout.D(),
		status:   ranges,
		network:  !c.DisableRetryOnNetworkError,
		anyMeth:  c.RetryNonIdempotentMethod,
		maxBody:  config.RetryDefaultMaxRequestBodyBytes,
	}
	if c.MaxRequestBodyBytes != nil {
		rt.maxBody = *c.MaxRequestBodyBytes
	}
	return func(next http.Handler) http.Handler {
		if rt.attempts == 1 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rt.serve(next, w, r) })
	}, nil
}

// parseStatusList parses status entries, each a code, a range or a comma
// list of them ("500,502,505-599"); the error names field and the entry.
func parseStatusList(field string, list []string) (statusrange.List, error) {
	l, err := statusrange.ParseList(list)
	if ee, ok := errors.AsType[*statusrange.EntryError](err); ok {
		return nil, errField(fmt.Sprintf("%s[%d]", field, ee.Index), "%w", ee.Err)
	}
	return l, err
}

type retrier struct {
	attempts         int
	initial, timeout time.Duration
	status           statusrange.List
	network, anyMeth bool
	maxBody          int64
}

func idempotent(method string) bool {
	return method != http.MethodPost && method != http.MethodPatch && method != "LOCK"
}

func (rt *retrier) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	status := rt.status
	if !rt.anyMeth && !idempotent(r.Method) {
		status = nil
	}
	var kept []byte // the whole body, for status retries
	var stream *readTracker
	if r.Body != nil && r.Body != http.NoBody {
		if len(status) > 0 {
			buf, rest, err := replay.ReadBody(r.Body, rt.maxBody)
			if err != nil {
				http.Error(w, "bad request body", http.StatusBadRequest)
				return
			}
			if rest == nil {
				kept = buf
			} else {
				status = nil // too big to keep: streamed once
				stream = &readTracker{rc: rest}
			}
		} else {
			stream = &readTracker{rc: r.Body}
		}
	}
	start := time.Now()
	for try := 0; ; try++ {
		req := r.Clone(r.Context())
		switch {
		case kept != nil:
			req.Body = io.NopCloser(bytes.NewReader(kept))
		case stream != nil:
			req.Body = stream
		}
		a := &Attempt{try: try}
		if try+1 >= rt.attempts {
			next.ServeHTTP(&lastTry{ResponseWriter: w, a: a}, req)
			return
		}
		rw := &retryWriter{a: a}
		rw.Init(w, func(code int) bool {
			if code == http.StatusSwitchingProtocols || rt.timeout > 0 && time.Since(start) >= rt.timeout {
				return false
			}
			if rt.network && a.networkRetryable() && (stream == nil || !stream.read.Load()) {
				return true
			}
			return status.Contains(code)
		}, true)
		next.ServeHTTP(rw, req)
		if !rw.Caught() || rw.hijacked {
			return
		}
		if !providers.Sleep(r.Context(), rt.wait(try)) {
			w.WriteHeader(rw.Code()) // the client is gone; this is for the access log
			return
		}
	}
}

// wait returns the pause after try (0-based).
func (rt *retrier) wait(try int) time.Duration {
	if rt.initial <= 0 {
		return 0
	}
	nominal := float64(rt.initial) * math.Pow(2, float64(try)/float64(rt.attempts-1))
	return time.Duration(nominal * (0.5 + rand.Float64()))
}

// readTracker records whether any byte of the body was read. Close does
// not close the client's body: a transport closes the request body even
// when it fails before sending anything, and the next try needs it; the
// server closes it when the handler returns.
type readTracker struct {
	rc   io.ReadCloser
	read atomic.Bool
}

func (t *readTracker) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if n > 0 {
		t.read.Store(true)
	}
	return n, err
}

func (t *readTracker) Close() error { return nil }

// retryWriter is a try's writer: it drops the answer of a try to repeat
// (see replay.Writer; 1xx answers are forwarded) and carries the try's
// Attempt.
type retryWriter struct {
	replay.Writer
	a        *Attempt
	hijacked bool
}

// Hijack hands the connection over (an upgrade): retrying ends.
func (rw *retryWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if rw.Caught() {
		return nil, nil, errors.New("retry: hijack of a discarded attempt")
	}
	rw.hijacked = true
	return http.NewResponseController(rw.Handoff()).Hijack()
}

// Attempt is the try's Attempt (see AttemptOf).
func (rw *retryWriter) Attempt() *Attempt { return rw.a }

// lastTry is the writer of the last try: the client's own, passed through,
// carrying the try's Attempt (a retry, for the retries count).
type lastTry struct {
	http.ResponseWriter
	a *Attempt
}

// Attempt is the try's Attempt (see AttemptOf).
func (w *lastTry) Attempt() *Attempt { return w.a }

// Unwrap exposes the client's writer (http.ResponseController).
func (w *lastTry) Unwrap() http.ResponseWriter { return w.ResponseWriter }
