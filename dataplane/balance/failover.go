package balance

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/gantry-proxy/gantry/config"
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
	maxBody        int64 // < 0: unlimited
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
		f.status = rs
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

func (h *failoverHandler) caught(code int) bool { return h.status.Contains(code) }

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
		var buf bytes.Buffer
		src := io.Reader(r.Body)
		if h.maxBody >= 0 {
			src = io.LimitReader(r.Body, h.maxBody+1)
		}
		if _, err := buf.ReadFrom(src); err != nil {
			http.Error(w, "bad request body", http.StatusBadRequest)
			return
		}
		if h.maxBody >= 0 && int64(buf.Len()) > h.maxBody {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(buf.Bytes()), r.Body), r.Body}
			h.main.ServeHTTP(w, r)
			return
		}
		body = buf.Bytes()
	}
	mr := r.Clone(r.Context())
	if body != nil {
		mr.Body = io.NopCloser(bytes.NewReader(body))
	}
	cw := &failoverWriter{w: w, header: http.Header{}, caught: h.caught}
	h.main.ServeHTTP(cw, mr)
	if !cw.fallback {
		return
	}
	fr := r.Clone(r.Context())
	if body != nil {
		fr.Body = io.NopCloser(bytes.NewReader(body))
	}
	h.fallback.ServeHTTP(w, fr)
}

// failoverWriter passes main's answer through unless its status is caught;
// then headers and body are dropped and fallback set. 1xx answers are
// dropped (Traefik's failover responseWriter does the same).
type failoverWriter struct {
	w        http.ResponseWriter
	header   http.Header
	caught   func(int) bool
	wrote    bool
	fallback bool
}

func (c *failoverWriter) Header() http.Header {
	if c.wrote && !c.fallback {
		return c.w.Header()
	}
	return c.header
}

func (c *failoverWriter) WriteHeader(code int) {
	if c.wrote || (code >= 100 && code < 200 && code != http.StatusSwitchingProtocols) {
		return
	}
	c.wrote = true
	if c.caught(code) {
		c.fallback = true
		return
	}
	dst := c.w.Header()
	for k, v := range c.header {
		dst[k] = v
	}
	c.w.WriteHeader(code)
}

func (c *failoverWriter) Write(b []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	if c.fallback {
		return len(b), nil
	}
	return c.w.Write(b)
}

func (c *failoverWriter) Flush() {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	if !c.fallback {
		_ = http.NewResponseController(c.w).Flush()
	}
}

// Unwrap exposes the client's writer (hijacking for upgrades, deadlines)
// once main's answer is passed through.
func (c *failoverWriter) Unwrap() http.ResponseWriter { return c.w }
