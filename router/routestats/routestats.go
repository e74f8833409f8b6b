// Package routestats keeps live counters of TCP and UDP routers: open and
// total connections (TCP) or sessions (UDP), bytes each way and, for UDP,
// datagrams each way. The data plane updates them with atomic adds only;
// the API reads them (/api/tcp/*, /api/udp/* "stats", Gantry's addition
// to Traefik's shapes).
//
// Directions are the client's: "in" is what clients sent (forwarded to
// servers), "out" what clients received.
package routestats

import (
	"sync"
	"sync/atomic"
)

// Counters are one router's counters. The zero value is ready; every
// method is safe for concurrent use and never locks or allocates.
type Counters struct {
	open                      atomic.Int64
	total                     atomic.Uint64
	bytesIn, bytesOut         atomic.Uint64
	datagramsIn, datagramsOut atomic.Uint64
}

// Opened counts a new connection or session.
func (c *Counters) Opened() { c.open.Add(1); c.total.Add(1) }

// Closed counts the end of a connection or session counted by Opened.
func (c *Counters) Closed() { c.open.Add(-1) }

// BytesIn is the counter of bytes clients sent; the TCP copy loop adds to
// it directly.
func (c *Counters) BytesIn() *atomic.Uint64 { return &c.bytesIn }

// BytesOut is the counter of bytes clients received.
func (c *Counters) BytesOut() *atomic.Uint64 { return &c.bytesOut }

// DatagramIn counts a client's datagram of n bytes forwarded to a server.
func (c *Counters) DatagramIn(n int) { c.datagramsIn.Add(1); c.bytesIn.Add(uint64(n)) }

// DatagramOut counts a server's datagram of n bytes sent to a client.
func (c *Counters) DatagramOut(n int) { c.datagramsOut.Add(1); c.bytesOut.Add(uint64(n)) }

// Stats is a copy of Counters at one moment, as the API shows it.
type Stats struct {
	// Open is the connections (TCP) or sessions (UDP) open now; Total
	// those opened since Gantry started (or since the router appeared).
	Open  int64  `json:"open"`
	Total uint64 `json:"total"`
	// BytesIn and BytesOut are payload bytes from and to clients.
	BytesIn  uint64 `json:"bytesIn"`
	BytesOut uint64 `json:"bytesOut"`
	// DatagramsIn and DatagramsOut count UDP datagrams (absent for TCP).
	DatagramsIn  uint64 `json:"datagramsIn,omitempty"`
	DatagramsOut uint64 `json:"datagramsOut,omitempty"`
}

// Stats reads the counters.
func (c *Counters) Stats() Stats {
	return Stats{
		Open: c.open.Load(), Total: c.total.Load(),
		BytesIn: c.bytesIn.Load(), BytesOut: c.bytesOut.Load(),
		DatagramsIn: c.datagramsIn.Load(), DatagramsOut: c.datagramsOut.Load(),
	}
}

// Add adds o to s (a service's stats are the sum of its routers').
func (s *Stats) Add(o Stats) {
	s.Open += o.Open
	s.Total += o.Total
	s.BytesIn += o.BytesIn
	s.BytesOut += o.BytesOut
	s.DatagramsIn += o.DatagramsIn
	s.DatagramsOut += o.DatagramsOut
}

// Registry holds the Counters of each router by qualified name. Counters
// live outside generations, so a swap that keeps a router keeps its
// counts.
type Registry struct {
	m sync.Map // router name -> *Counters
}

// Router returns the counters of router name, creating them on first use
// (one sync.Map lookup afterwards).
func (r *Registry) Router(name string) *Counters {
	v, ok := r.m.Load(name)
	if !ok {
		v, _ = r.m.LoadOrStore(name, &Counters{})
	}
	return v.(*Counters)
}

// Get returns the stats of router name; ok is false when it never had a
// connection or session.
func (r *Registry) Get(name string) (Stats, bool) {
	v, ok := r.m.Load(name)
	if !ok {
		return Stats{}, false
	}
	return v.(*Counters).Stats(), true
}

// Forget drops the counters of routers for which keep returns false and
// that have nothing open, so removed routers do not accumulate; a router
// that comes back starts from zero.
func (r *Registry) Forget(keep func(name string) bool) {
	r.m.Range(func(k, v any) bool {
		if !keep(k.(string)) && v.(*Counters).open.Load() == 0 {
			r.m.Delete(k)
		}
		return true
	})
}
