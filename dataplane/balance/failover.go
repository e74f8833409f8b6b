package balance

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/dataplane/replay"
	"github.com/gantry-proxy/gantry/dataplane/statusrange"
)

// failoverHandler is a failover service: requests go to main while main has
// an available server, else to fallback. With failover.errors.status
// (Traefik v3.7), a request main answers with a listed status is sent to
// fallback too: main's answer (headers and body) is discarded and the
// request replayed, its body kept up to errors.maxRequestBodyBytes (unset
// or negative: unlimited, Traefik's default -1).
//
// Health propagation: Traefik pushes status changes up only between
// services that both set healthCheck, and refuses to build a failover
// whose main has no health check unless errors are set. Gantry always
// knows: each request asks main whether it has an available server (its
// active and passive checks, recursively through weighted, mirroring and
// failover children), and the failover reports itself available to its
// own parents while main or fallback is. healthCheck: {} on the failover
// is accepted and changes nothing.
//
// Deliberate difference: a body larger than maxRequestBodyBytes is not
// refused with 413 as Traefik does; it is streamed to main once, without
// status failover for that request.
// Source: https://doc.traefik.io/traefik/reference/routing-configuration/http/load-balancing/service/#failover
// and pkg/server/service/loadbalancer/failover/failover.go (v3.7).
type failoverHandler struct {
	main, fallback http.Handler
	status         statusrange.List
	caught         func(code int) bool // status.Contains, made once
	maxBody        int64               // < 0: unlimited
}

// NewFailover returns the failover service over main and fallback. An
// error names a bad failover.errors.status.
func NewFailover(main, fallback http.Handler, c *config.Failover) (http.Handler, error) {
	f := &failoverHandler{main: main, fallback: fallback, maxBody: -1}
	if e := c.Errors; e != nil {
		rs, err := statusrange.ParseList(e.Status)
		if err != nil {
			return nil, fmt.Errorf("failover.errors.status%w", err)
		}
		f.status, f.caught = rs, rs.Contains
		if e.MaxRequestBodyBytes != nil {
			f.maxBody = *e.MaxRequestBodyBytes
		}
	}
	return f, nil
}

// Available implements Availabler.
func (h *failoverHandler) Available() bool {
	return Available(h.main) || Available(h.fallback)
}

func (h *failoverHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !Available(h.main) {
		h.fallback.ServeHTTP(w, r)
		return
	}
	if len(h.status) == 0 {
		h.main.ServeHTTP(w, r)
		return
	}
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		kept, rest, err := replay.ReadBody(r.Body, h.maxBody)
		if err != nil {
			http.Error(w, "bad request body", http.StatusBadRequest)
			return
		}
		if rest != nil {
			r.Body = rest
			h.main.ServeHTTP(w, r)
			return
		}
		body = kept
	}
	mr := r.Clone(r.Context())
	if body != nil {
		mr.Body = io.NopCloser(bytes.NewReader(body))
	}
	cw := replay.NewWriter(w, h.caught, false)
	h.main.ServeHTTP(cw, mr)
	if !cw.Caught() {
		return
	}
	fr := r.Clone(r.Context())
	if body != nil {
		fr.Body = io.NopCloser(bytes.NewReader(body))
	}
	h.fallback.ServeHTTP(w, fr)
}
