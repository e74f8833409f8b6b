package balance

import (
	"bytes"
	"io"
	"net/http"
	"sync/atomic"
)

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
	pool       *Pool
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
func (h *mirrorHandler) Available() bool { return Available(h.main) }

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
		mr := r.Clone(h.pool.work.Context())
		if body != nil {
			mr.Body = io.NopCloser(bytes.NewReader(body))
		} else {
			mr.Body = http.NoBody
			mr.ContentLength = 0
		}
		// Not sent once the Pool is closed (its context is canceled).
		h.pool.work.Go(func() { m.h.ServeHTTP(discardWriter{h: http.Header{}}, mr) })
	}
	h.main.ServeHTTP(w, r)
}

// discardWriter is the ResponseWriter of mirror requests.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header       { return d.h }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}

// Mirror is one mirror of a mirroring service: its handler and the share
// of requests (0-100 %) it gets.
type Mirror struct {
	Handler http.Handler
	Percent int
}

// NewMirroring returns the mirroring service: every request to main and
// each mirror's share to it, with the body when mirrorBody (up to maxBody
// bytes; < 0 unlimited; a larger body skips the mirrors). Mirror requests
// run in goroutines of pool, which Pool.Close cancels and joins.
func NewMirroring(main http.Handler, mirrors []Mirror, mirrorBody bool, maxBody int64, pool *Pool) http.Handler {
	h := &mirrorHandler{main: main, mirrorBody: mirrorBody, maxBody: maxBody, pool: pool}
	for _, x := range mirrors {
		h.mirrors = append(h.mirrors, &mirror{h: x.Handler, percent: uint64(min(max(x.Percent, 0), 100))})
	}
	return h
}
