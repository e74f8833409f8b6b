package middleware

import (
	"net/http"
	"sync"

	"github.com/gantry-proxy/gantry/config"
)

// newInFlightReq allows at most c.Amount simultaneous requests per source
// (sourceCriterion, default the peer IP); more get 429.
// Source: https://doc.traefik.io/traefik/middlewares/http/inflightreq/
func newInFlightReq(c *config.InFlightReq) (Middleware, error) {
	if c.Amount <= 0 {
		return nil, errField("amount", "%d: want a positive number of requests", c.Amount)
	}
	src, err := newSource(c.SourceCriterion)
	if err != nil {
		return nil, err
	}
	l := &inFlight{max: c.Amount, src: src, n: map[string]int64{}}
	return l.wrap, nil
}

type inFlight struct {
	max int64
	src sourceFunc
	mu  sync.Mutex
	n   map[string]int64 // entries are removed when they reach 0
}

func (l *inFlight) acquire(key []byte) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.n[string(key)]
	if n >= l.max {
		return false
	}
	l.n[string(key)] = n + 1
	return true
}

func (l *inFlight) release(key []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.n[string(key)]; n > 1 {
		l.n[string(key)] = n - 1
		return
	}
	delete(l.n, string(key))
}

func (l *inFlight) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf [64]byte
		key := l.src(r, buf[:0])
		if !l.acquire(key) {
			http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
			return
		}
		defer l.release(key)
		next.ServeHTTP(w, r)
	})
}
