package dashboard

import (
	"net/http"
	"sync/atomic"
)

// Ping is ping@internal: GET or HEAD answers 200 "OK" while running and
// 503 once terminating is set (Traefik's ping,
// https://doc.traefik.io/traefik/operations/ping/). Other methods get 405.
type Ping struct {
	terminating atomic.Bool
}

// SetTerminating makes Ping answer 503 from now on (graceful shutdown).
func (p *Ping) SetTerminating() { p.terminating.Store(true) }

// ServeHTTP implements http.Handler.
func (p *Ping) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if p.terminating.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(http.StatusText(http.StatusServiceUnavailable)))
		return
	}
	_, _ = w.Write([]byte("OK"))
}
