package dataplane

import (
	"time"

	"github.com/gantry-proxy/gantry/dataplane/h1"
)

// Connection cap defaults (entryPoints.<name>.transport.maxConnections).
const (
	// defaultMaxConnections is the cap when the open-file limit allows
	// it: Envoy's edge guidance is 10 000 per listener and 50 000
	// downstream connections overall; a Gantry entrypoint usually is the
	// whole edge, so it gets the overall figure.
	defaultMaxConnections = 50000
	// fdReserve is the descriptors kept out of every entrypoint's share
	// (connCapFor), besides the listeners: the store, log files, the
	// providers' connections, the epoll and event descriptors, health
	// checks.
	fdReserve = 64
)

// connCapFor returns the default cap of an entrypoint among n TCP
// entrypoints when the process may open nofile descriptors (0: unknown,
// then defaultMaxConnections), and listeners descriptors listen per
// entrypoint. A proxied connection holds two descriptors (the client's and
// the backend's); a quarter of the limit is UDP's (its sessions are bounded
// by nofile/4, udpproxy); fdReserve and the listeners are kept aside; what
// is left is split evenly among the entrypoints, so a flooded entrypoint
// stops accepting (or reclaims its idle connections) before it exhausts
// the descriptors: another entrypoint (the API's, /ping) still accepts.
// The result is between 1 and defaultMaxConnections.
func connCapFor(nofile uint64, n, listeners int) int {
	if nofile == 0 {
		return defaultMaxConnections
	}
	n = max(n, 1)
	budget := int64(nofile) - int64(nofile/4) - fdReserve - int64(n*listeners)
	return int(min(max(budget/int64(2*n), 1), defaultMaxConnections))
}

// takeSlotAtCap takes a connection slot when every one is held, instead
// of leaving the connection just accepted (and those behind it in the
// backlog) waiting for a connection to end: it closes the keep-alive
// connection parked idle the longest among the entrypoint's HTTP/1 servers
// (its slot frees as it closes) and takes that slot, as nginx reuses idle
// keep-alive connections when worker_connections run out. With none
// parked (every connection busy, idle for less than h1's handoff, HTTP/2,
// upgraded or TCP-routed), it waits until a slot frees or a connection
// parks. It returns false when the entrypoint stops meanwhile.
func (e *entryPoint) takeSlotAtCap() bool {
	e.atCap.Add(1) // from here every park signals e.parked
	defer e.atCap.Add(-1)
	if !e.capWarned.Swap(true) {
		e.log.Warn("connection cap reached: the oldest idle keep-alive connections are closed to make room; new connections wait when none is idle",
			"maxConnections", cap(e.slots))
	}
	for {
		if e.closeOldestIdle() {
			select {
			case e.slots <- struct{}{}:
				return true
			default: // another accept loop took the freed slot first
				continue
			}
		}
		select {
		case e.slots <- struct{}{}:
			return true
		case <-e.parked:
		case <-e.stop:
			return false
		}
	}
}

// closeOldestIdle closes the connection parked idle the longest among the
// entrypoint's HTTP/1 servers (one per listener; they share IdleTimeout,
// so the earliest idle deadline went idle first) and reports whether
// there was one.
func (e *entryPoint) closeOldestIdle() bool {
	e.mu.Lock()
	var oldest *h1.Server
	var at time.Time
	for _, s := range e.h1s {
		if t, ok := s.OldestParked(); ok && (oldest == nil || t.Before(at)) {
			oldest, at = s, t
		}
	}
	e.mu.Unlock()
	// Closed outside e.mu: the connection's Close forgets it under e.mu.
	return oldest != nil && oldest.CloseOldestParked()
}

// parkedHook is h1.Server.Parked: it wakes an accept loop waiting at the
// cap (takeSlotAtCap) when a connection becomes reclaimable.
func (e *entryPoint) parkedHook() {
	if e.atCap.Load() == 0 {
		return
	}
	select {
	case e.parked <- struct{}{}:
	default:
	}
}
