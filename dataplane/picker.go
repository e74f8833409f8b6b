package dataplane

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
)

// picker chooses a target. pick must not block, must be safe for concurrent
// use, and returns ErrNoBackend when no target is available. Pickers are
// immutable once built and read only atomics (design.md §2.3 item 6).
type picker interface {
	pick(r *http.Request) (*target, error)
}

// maxSequence bounds the precomputed smooth-WRR sequence; larger weight
// sums are scaled down proportionally (each weight stays ≥ 1).
const maxSequence = 4096

// wrrPicker is smooth weighted round robin (nginx's algorithm), computed once
// at build time into a sequence of target indexes; a pick is one atomic
// increment. An unavailable target's slots are skipped, so the available
// targets share the traffic in the ratio of their weights.
type wrrPicker struct {
	targets []*target
	seq     []int32
	next    atomic.Uint64
}

func newWRR(ts []*target) *wrrPicker {
	w := make([]int, len(ts))
	for i, t := range ts {
		w[i] = t.weight
	}
	return &wrrPicker{targets: ts, seq: smoothSequence(w)}
}

// smoothSequence returns one period of smooth weighted round robin over
// weights (0 weights never appear): each step adds every weight to its
// current value, picks the largest and subtracts the total from it.
func smoothSequence(weights []int) []int32 {
	g, total := 0, 0
	for _, w := range weights {
		if w > 0 {
			g = gcd(g, w)
			total += w
		}
	}
	if total == 0 {
		return nil
	}
	w := make([]int, len(weights))
	total = 0
	for i, x := range weights {
		if x > 0 {
			w[i] = x / g
			total += w[i]
		}
	}
	if total > maxSequence {
		scaled := 0
		for i, x := range w {
			if x > 0 {
				w[i] = max(1, int(math.Round(float64(x)*maxSequence/float64(total))))
				scaled += w[i]
			}
		}
		total = scaled
	}
	cur := make([]int, len(w))
	seq := make([]int32, 0, total)
	for range total {
		best := -1
		for i, x := range w {
			if x == 0 {
				continue
			}
			cur[i] += x
			if best < 0 || cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		seq = append(seq, int32(best))
	}
	return seq
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func (p *wrrPicker) pick(*http.Request) (*target, error) {
	n := uint64(len(p.seq))
	if n == 0 {
		return nil, ErrNoBackend
	}
	// An unavailable slot is skipped by taking the next ticket, so each
	// available slot of the period is served once and the available
	// targets keep their relative weights.
	for range n {
		t := p.targets[p.seq[(p.next.Add(1)-1)%n]]
		if t.available() {
			return t, nil
		}
	}
	return nil, ErrNoBackend
}

// p2cPicker is power of two choices: two random available targets (weight
// > 0), the one with fewer requests in flight wins.
type p2cPicker struct{ targets []*target }

func (p *p2cPicker) pick(*http.Request) (*target, error) {
	n := len(p.targets)
	if n == 0 {
		return nil, ErrNoBackend
	}
	a, b := p.randomAvailable(n, -1), -1
	if a < 0 {
		return nil, ErrNoBackend
	}
	if n > 1 {
		b = p.randomAvailable(n, a)
	}
	if b >= 0 && p.targets[b].backend.inflight.Load() < p.targets[a].backend.inflight.Load() {
		a = b
	}
	return p.targets[a], nil
}

// randomAvailable returns a random available index other than not, or -1.
func (p *p2cPicker) randomAvailable(n, not int) int {
	off := rand.IntN(n)
	for i := range n {
		j := (off + i) % n
		if j != not && p.targets[j].available() {
			return j
		}
	}
	return -1
}

// hrwPicker is highest random weight (rendezvous) hashing on the client IP:
// a client keeps its server while that server is available, and a server
// leaving moves only its own clients. Weights scale the scores.
type hrwPicker struct {
	targets []*target
	seeds   []uint64 // FNV-1a of each target URL
}

func newHRW(ts []*target) *hrwPicker {
	p := &hrwPicker{targets: ts, seeds: make([]uint64, len(ts))}
	for i, t := range ts {
		h := fnv.New64a()
		_, _ = h.Write([]byte(t.url.String()))
		p.seeds[i] = h.Sum64()
	}
	return p
}

func (p *hrwPicker) pick(r *http.Request) (*target, error) {
	ip := peerIP(r.RemoteAddr)
	var kh uint64 = 14695981039346656037
	for i := 0; i < len(ip); i++ {
		kh ^= uint64(ip[i])
		kh *= 1099511628211
	}
	best, bestScore := -1, math.Inf(-1)
	for i, t := range p.targets {
		if !t.available() {
			continue
		}
		h := mix64(kh ^ p.seeds[i])
		u := (float64(h>>11) + 0.5) / (1 << 53) // (0,1)
		score := -float64(t.weight) / math.Log(u)
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return nil, ErrNoBackend
	}
	return p.targets[best], nil
}

// mix64 is the SplitMix64 finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
