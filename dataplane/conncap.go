package dataplane

import (
	"net/http"
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
// connection parked idle the longest among the entrypoint's HTTP/1 servers,
// or else the HTTP/2 connection without an open stream the longest (its
// slot frees as it closes), and takes that slot, as nginx reuses idle
// keep-alive connections when worker_connections run out. With none idle
// (every connection busy, idle for less than h1's handoff, upgraded or
// TCP-routed), it waits until a slot frees or a connection becomes idle.
// It returns false when the entrypoint stops meanwhile.
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
	if oldest != nil && oldest.CloseOldestParked() {
		return true
	}
	return e.closeOldestIdleH2()
}

// closeOldestIdleH2 closes the HTTP/2 connection of the entrypoint that
// has had no open stream the longest, and reports whether there was one.
// Its slot is free when it returns. Idle HTTP/1 connections go first
// (closeOldestIdle): they hold no state.
//
// The connection is closed without a GOAWAY (RFC 9113 §6.8 asks for one
// before a graceful close): net/http's HTTP/2 server sends it only when
// the whole server shuts down or its IdleTimeout fires, and writing one
// from here could split a frame the server is writing. The stream count
// is checked at the close (a compare-and-swap on h2idle, which net/http's
// StateActive clears when a stream opens), so a connection with a stream
// open is never closed here; a request whose HEADERS are still in flight
// from the client at that moment is lost with the connection, as on an
// HTTP/1.1 keep-alive connection closed while idle (RFC 9112 §9.3.1), and
// HTTP/2 clients retry it on a new connection when it was unanswered.
// The scan is over the entrypoint's connections, only at the cap and only
// when no HTTP/1 connection is parked.
func (e *entryPoint) closeOldestIdleH2() bool {
	for range 3 { // a connection that became busy meanwhile: look again
		e.mu.Lock()
		var oldest *trackedConn
		var at int64
		for c := range e.conns {
			if t := c.h2idle.Load(); t != 0 && (oldest == nil || t < at) {
				oldest, at = c, t
			}
		}
		e.mu.Unlock()
		if oldest == nil {
			return false
		}
		if oldest.h2idle.CompareAndSwap(at, 0) {
			_ = oldest.Close() // the server sees its reads fail and ends the connection
			return true
		}
	}
	return false
}

// h2ConnState follows net/http's HTTP/2 connection states: StateIdle when
// its last stream ends (and when it starts), StateActive when one opens.
// An idle connection may be closed at the cap (closeOldestIdleH2) and
// wakes an accept loop waiting there.
func (e *entryPoint) h2ConnState(c *trackedConn, st http.ConnState) {
	if st == http.StateIdle {
		c.h2idle.Store(time.Now().UnixNano())
		e.parkedHook()
		return
	}
	c.h2idle.Store(0)
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
