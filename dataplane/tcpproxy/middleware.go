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
// one over the cap is closed at once. The counts live as long as the
// handler, i.e. one generation (Traefik keeps them per middleware too).
type InFlight struct {
	Max  int64
	Next tcpmux.Handler

	mu sync.Mutex
	n  map[netip.Addr]int64
}

// ServeTCP serves c unless its client IP is at the cap.
func (f *InFlight) ServeTCP(c *tcpmux.Conn) {
	ip := c.Client.Addr().Unmap()
	f.mu.Lock()
	if f.n == nil {
		f.n = map[netip.Addr]int64{}
	}
	if f.n[ip] >= f.Max {
		f.mu.Unlock()
		_ = c.Close()
		return
	}
	f.n[ip]++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		if f.n[ip]--; f.n[ip] <= 0 {
			delete(f.n, ip)
		}
		f.mu.Unlock()
	}()
	f.Next.ServeTCP(c)
}
