package middleware

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// newRetry re-sends a request that did not reach a backend — the answer
// is 502, 503 or 504 and the transport never wrote the request headers
// (dial errors, no available server, seen through httptrace) — up to
// c.Attempts tries in all. Any other answer (a 401 from an inner
// middleware, a backend's own error) is passed on at once. Between tries it
// waits c.InitialInterval, doubling each time up to twice the initial value
// (0: retry at once). A request is never retried once a backend received
// it, once a response started, or once its body was read, so a retry never
// replays anything a backend could have acted on. Each try gets a fresh
// copy of the original headers, so inner middlewares edit their own copy.
// Source: https://doc.traefik.io/traefik/middlewares/http/retry/
func newRetry(c *config.Retry) (Middleware, error) {
	if c.Attempts <= 0 {
		return nil, errField("attempts", "%d: want at least 1", c.Attempts)
	}
	if c.InitialInterval < 0 {
		return nil, errField("initialInterval", "%s is negative", c.InitialInterval)
	}
	attempts, initial := c.Attempts, c.InitialInterval.D()
	return func(next http.Handler) http.Handler {
		if attempts == 1 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body *readTracker
			if r.Body != nil && r.Body != http.NoBody {
				body = &readTracker{rc: r.Body}
			}
			wait := initial
			for try := 1; ; try++ {
				var sent atomic.Bool
				trace := &httptrace.ClientTrace{WroteHeaders: func() { sent.Store(true) }}
				req := r.WithContext(httptrace.WithClientTrace(r.Context(), trace))
				req.Header = r.Header.Clone()
				if body != nil {
					req.Body = body
				}
				last := try >= attempts
				rw := &retryWriter{w: w, header: http.Header{}, retry: func(code int) bool {
					return !last && gatewayFailure(code) && !sent.Load() && (body == nil || !body.read.Load())
				}}
				next.ServeHTTP(rw, req)
				if !rw.discarded {
					return
				}
				if wait > 0 {
					t := time.NewTimer(wait)
					select {
					case <-t.C:
					case <-r.Context().Done():
						t.Stop()
						w.WriteHeader(rw.code) // the client is gone; this is for the access log
						return
					}
					wait = min(wait*2, 2*initial)
				}
			}
		})
	}, nil
}

// gatewayFailure reports whether code is what the proxy answers when it
// could not get a response from a backend.
func gatewayFailure(code int) bool {
	return code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout
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

// retryWriter discards the response of a try that retry() says to repeat,
// and passes any other response through. Headers stay in its own map until
// the status is known.
type retryWriter struct {
	w         http.ResponseWriter
	header    http.Header
	retry     func(code int) bool
	code      int
	wrote     bool
	discarded bool
}

func (rw *retryWriter) Header() http.Header {
	if rw.wrote && !rw.discarded {
		return rw.w.Header()
	}
	return rw.header
}

func (rw *retryWriter) WriteHeader(code int) {
	if rw.wrote {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		rw.w.WriteHeader(code)
		return
	}
	rw.wrote, rw.code = true, code
	if rw.retry(code) {
		rw.discarded = true
		return
	}
	dst := rw.w.Header()
	for k, v := range rw.header {
		dst[k] = v
	}
	rw.w.WriteHeader(code)
}

func (rw *retryWriter) Write(b []byte) (int, error) {
	if !rw.wrote {
		rw.WriteHeader(http.StatusOK)
	}
	if rw.discarded {
		return len(b), nil
	}
	return rw.w.Write(b)
}

func (rw *retryWriter) Flush() {
	if !rw.wrote {
		rw.WriteHeader(http.StatusOK)
	}
	if !rw.discarded {
		_ = http.NewResponseController(rw.w).Flush()
	}
}

// Unwrap exposes the client's writer (hijacking for upgrades, deadlines).
func (rw *retryWriter) Unwrap() http.ResponseWriter { return rw.w }
