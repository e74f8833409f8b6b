package dataplane

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"

	"github.com/gantry-proxy/gantry/config"
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

func (g *Generation) buildHRW(ctx context.Context, c *config.HighestRandomWeight) (http.Handler, error) {
	h := &hrwHandler{}
	for _, s := range c.Services {
		w := 1
		if s.Weight != nil {
			w = *s.Weight
		}
		if w <= 0 {
			continue
		}
		ch, err := g.Service(ctx, s.Name)
		if err != nil {
			return nil, fmt.Errorf("highestRandomWeight: %w", err)
		}
		h.children = append(h.children, ch)
		h.names = append(h.names, s.Name)
		h.weights = append(h.weights, float64(w))
	}
	return h, nil
}

func (h *hrwHandler) available() bool {
	for _, c := range h.children {
		if handlerAvailable(c) {
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
		if !handlerAvailable(c) {
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
