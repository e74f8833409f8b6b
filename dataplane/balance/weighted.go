package balance

import (
	"net/http"
	"sync/atomic"
)

// weightedHandler splits requests over child services by weight with the
// smooth WRR sequence; children that report no available server are
// skipped. All skipped → 503.
type weightedHandler struct {
	children []http.Handler
	seq      []int32
	next     atomic.Uint64
	sticky   *ChildSticky // weighted.sticky.cookie; nil when unset
}

// Available implements balance.Availabler.
func (h *weightedHandler) Available() bool {
	for _, i := range h.seq {
		if Available(h.children[i]) {
			return true
		}
	}
	return false
}

func (h *weightedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.sticky != nil {
		if i, rewrite := h.sticky.Lookup(r); i >= 0 && Available(h.children[i]) {
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
			if c := h.children[i]; Available(c) {
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

// NewWeighted returns the weighted service over children, weights[i]
// being that of children[i] (0: never chosen); sticky pins clients to a
// child (weighted.sticky.cookie, NewChildSticky), nil when unset.
func NewWeighted(children []http.Handler, weights []int, sticky *ChildSticky) http.Handler {
	return &weightedHandler{children: children, seq: smoothSequence(weights), sticky: sticky}
}
