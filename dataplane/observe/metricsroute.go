package observe

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// RouteObserver is an Observer that prepares what it needs for one route
// ahead of its requests: the dataplane calls ForRoute once per router
// when it builds a configuration generation, and reports that router's
// requests to the Observer returned.
type RouteObserver interface {
	Observer
	// ForRoute returns the Observer of the requests router (qualified)
	// sends to service (qualified; "" when it has none).
	ForRoute(router, service string) Observer
}

// ForRoute implements RouteObserver: the Observer it returns records
// like m, but finds the series of the route's requests in a small cache of
// its own (the last few label sets it saw, compared field by field)
// instead of hashing every label into m's shared map per request.
func (m *Metrics) ForRoute(router, service string) Observer {
	return &routeMetrics{m: m, router: router, service: service}
}

// routeCacheSize is how many label sets (entrypoint, code, method,
// protocol, header labels) one route keeps at hand: the first ones it
// sees, which stay (so a route with many never allocates per request); the
// others are recorded through the shared map.
const routeCacheSize = 8

// routeMetrics is Metrics for the requests of one route. Its caches are
// lock-free: each slot is filled once and published whole (a nil slot
// ends the scan, so a slot filled late is found by later requests).
type routeMetrics struct {
	m               *Metrics
	router, service string
	recent          [routeCacheSize]atomic.Pointer[routeEntry]
	next            atomic.Uint32                 // slots claimed
	tls             atomic.Pointer[routeTLSEntry] // the first TLS label set seen
}

type routeEntry struct {
	k reqKey
	c *children
}

type routeTLSEntry struct {
	k tlsKey
	c *tlsSeries[prometheus.Counter]
}

// Request implements Observer.
func (r *routeMetrics) Request(ev *RequestEvent) { r.m.request(ev, r) }

// Conn implements Observer; connections are not a route's.
func (r *routeMetrics) Conn(entryPoint, protocol string, delta int) {
	r.m.Conn(entryPoint, protocol, delta)
}

// children returns the children of k, from the route's cache when it
// holds k, else from the shared map (then cached).
func (r *routeMetrics) children(k reqKey) *children {
	for i := range r.recent {
		e := r.recent[i].Load()
		if e == nil {
			break
		}
		if e.k == k {
			return e.c
		}
	}
	c := r.m.children(k)
	if k.router == r.router && k.service == r.service && r.next.Load() < routeCacheSize {
		if i := r.next.Add(1) - 1; i < routeCacheSize {
			r.recent[i].Store(&routeEntry{k: k, c: c})
		}
	}
	return c
}

// tlsChildren is children for the TLS counters: the first set seen is kept.
func (r *routeMetrics) tlsChildren(k tlsKey) *tlsSeries[prometheus.Counter] {
	if e := r.tls.Load(); e != nil && e.k == k {
		return e.c
	}
	c := r.m.tlsChildren(k)
	if k.router == r.router && k.service == r.service && r.tls.Load() == nil {
		r.tls.CompareAndSwap(nil, &routeTLSEntry{k: k, c: c})
	}
	return c
}

// ForRoute implements RouteObserver: each observer that prepares per
// route does, the others are called as they are.
func (m multi) ForRoute(router, service string) Observer {
	out := make(multi, len(m))
	for i, o := range m {
		if ro, ok := o.(RouteObserver); ok {
			o = ro.ForRoute(router, service)
		}
		out[i] = o
	}
	return out
}
