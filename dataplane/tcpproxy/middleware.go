package tcpproxy

import (
	"io"
	"net/netip"
	"sync"

	"github.com/gantry-proxy/gantry/router/tcpmux"
)

func ioReadFull(r io.Reader, b []byte) (int, error) { return io.ReadFull(r, b) }

// AllowList closes connections whose client IP is outside the ranges
// (ipAllowList; the client IP is the PROXY protocol source when trusted).
type AllowList struct {
	Ranges []netip.Prefix
	Next   tcpmux.Handler
}

// ServeTCP serves c when its client is allowed, else closes it.
func (a *AllowList) ServeTCP(c *tcpmux.Conn) {
	ip := c.Client.Addr().Unmap()
	for _, p := range a.Ranges {
		if p.Contains(ip) {
			a.Next.ServeTCP(c)
			return
		}
	}
	_ = c.Close()
}

// InFlight caps simultaneous connections per client IP (inFlightConn);
// one over the cap is closed at once. Counts holds the open connections
// per IP; shared through InFlightCounts, it outlives the generation that
// built the handler, so a configuration swap (even a refused or unrelated
// one) never resets the count while the old connections stay open.
// Traefik builds new, empty counters at every configuration change
// (case 062), which lets a client hold the cap once per generation.
type InFlight struct {
	Max    int64
	Next   tcpmux.Handler
	Counts *ConnCounts
}

// ConnCounts are open connections per client IP. Get one from
// InFlightCounts.Acquire (the zero value works on its own too).
type ConnCounts struct {
	mu sync.Mutex
	n  map[netip.Addr]int64
	// The registry it is kept in and its key there (nil reg: none).
	reg *InFlightCounts
	key string
}

// ServeTCP serves c unless its client IP is at the cap.
func (f *InFlight) ServeTCP(c *tcpmux.Conn) {
	cc := f.Counts
	ip := c.Client.Addr().Unmap()
	cc.mu.Lock()
	if cc.n == nil {
		cc.n = map[netip.Addr]int64{}
	}
	if cc.n[ip] >= f.Max {
		cc.mu.Unlock()
		_ = c.Close()
		return
	}
	cc.n[ip]++
	cc.mu.Unlock()
	defer cc.done(ip)
	f.Next.ServeTCP(c)
}

// done counts one connection of ip closed; the last one of counts no
// generation holds any more drops them from their registry.
func (cc *ConnCounts) done(ip netip.Addr) {
	cc.mu.Lock()
	if cc.n[ip]--; cc.n[ip] <= 0 {
		delete(cc.n, ip)
	}
	empty := len(cc.n) == 0
	cc.mu.Unlock()
	if empty && cc.reg != nil {
		cc.reg.drop(cc)
	}
}

// idle reports whether cc counts no open connection.
func (cc *ConnCounts) idle() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.n) == 0
}

// InFlightCounts keeps the ConnCounts of each inFlightConn middleware
// across generations, keyed by router and middleware name. Safe for
// concurrent use; the zero value is ready.
type InFlightCounts struct {
	s shared[*ConnCounts]
}

// Acquire returns the counts kept under key (new when none) and the
// function that releases this holder's reference. Counts no holder keeps
// and with no connection open are forgotten.
func (r *InFlightCounts) Acquire(key string) (*ConnCounts, func()) {
	return r.s.acquire(key, func() *ConnCounts { return &ConnCounts{reg: r, key: key} })
}

// drop forgets cc when no holder keeps it and no connection is open.
func (r *InFlightCounts) drop(cc *ConnCounts) { r.s.drop(cc.key, cc) }

// Len is the number of counts kept (for tests and leak checks).
func (r *InFlightCounts) Len() int { return r.s.len() }
