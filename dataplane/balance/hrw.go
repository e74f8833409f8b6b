package balance

import (
	"hash/fnv"
	"math"
	"net/http"
)

// hrwHandler is a highestRandomWeight service: each request goes to the
// available child with the highest weight / -ln(h), h being the FNV-64a
// hash of the client's peer IP followed by the child's name, as a fraction
// of 2^64 (Traefik's getNodeScore, pkg/server/service/loadbalancer/hrw), so
// a client keeps its child while that child is available and a child
// leaving moves only its own clients. Children of weight 0 are left out;
// none available → 503 "no available server". The client IP is the
// connection's peer, never X-Forwarded-For (Traefik's RemoteAddrStrategy).
// Like weighted and failover services it always skips children without an
// available server (Traefik needs healthCheck set on both levels).
type hrwHandler struct {
	children []http.Handler
	names    []string
	weights  []float64
}

// NewHighestRandomWeight returns the highestRandomWeight service over
// children, names[i] and weights[i] (> 0) being those of children[i].
func NewHighestRandomWeight(children []http.Handler, names []string, weights []float64) http.Handler {
	return &hrwHandler{children: children, names: names, weights: weights}
}

// Available implements Availabler.
func (h *hrwHandler) Available() bool {
	for _, c := range h.children {
		if Available(c) {
			return true
		}
	}
	return false
}

func (h *hrwHandler) score(i int, ip string) float64 {
	f := fnv.New64a()
	_, _ = f.Write([]byte(ip + h.names[i]))
	u := float64(f.Sum64()) / math.Pow(2, 64)
	return h.weights[i] / -math.Log(u)
}

func (h *hrwHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ip := peerIP(r.RemoteAddr)
	best, bestScore := -1, math.Inf(-1)
	for i, c := range h.children {
		if !Available(c) {
			continue
		}
		if s := h.score(i, ip); s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		http.Error(w, "no available server", http.StatusServiceUnavailable)
		return
	}
	h.children[best].ServeHTTP(w, r)
}
