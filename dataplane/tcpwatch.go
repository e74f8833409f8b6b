package dataplane

import (
	"net"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/router"
)

// tcpLive is the set of an entrypoint's TCP-routed connections, by router,
// for watchTCP: one goroutine per entrypoint watches the table swaps for
// all of them, where each connection used to have a watcher goroutine of
// its own (a goroutine start, a select and a channel per connection).
type tcpLive struct {
	mu    sync.Mutex
	conns map[*tcpConn]struct{}
	// kick asks the watcher to check the live table again: a connection
	// was registered after the table it was routed by had been replaced,
	// possibly after the watcher looked at that swap.
	kick chan struct{}
}

// tcpConn is one registered connection: the router it was routed by and
// the socket to close when that router is removed.
type tcpConn struct {
	router string
	raw    net.Conn
	doomed bool // its router was removed: it is closed after the grace period
}

// add registers raw, served by router name of table t, and returns what
// remove takes.
func (l *tcpLive) add(t *router.Table, name string, raw net.Conn) *tcpConn {
	c := &tcpConn{router: name, raw: raw}
	l.mu.Lock()
	if l.conns == nil {
		l.conns = make(map[*tcpConn]struct{})
	}
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	select {
	case <-t.Replaced():
		select {
		case l.kick <- struct{}{}:
		default: // a check is already due
		}
	default:
	}
	return c
}

// remove forgets c (its connection ended).
func (l *tcpLive) remove(c *tcpConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// removal is a batch of connections whose router went from the live
// table, closed at the deadline unless they ended before.
type removal struct {
	at    time.Time
	conns []*tcpConn
}

// doom marks the connections whose router table t no longer routes on
// entrypoint ep and returns them (each is doomed once).
func (l *tcpLive) doom(t *router.Table, ep string) []*tcpConn {
	tep := t.TCP(ep)
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*tcpConn
	for c := range l.conns {
		if !c.doomed && !tep.Has(c.router) {
			c.doomed = true
			out = append(out, c)
		}
	}
	return out
}

// closeDue closes the connections of r still open and reports how many.
func (l *tcpLive) closeDue(r removal) int {
	l.mu.Lock()
	var open []*tcpConn
	for _, c := range r.conns {
		if _, ok := l.conns[c]; ok {
			open = append(open, c)
		}
	}
	l.mu.Unlock()
	for _, c := range open {
		_ = c.raw.Close() // its handler removes it as it ends
	}
	return len(open)
}

// empty reports whether no TCP-routed connection is open.
func (l *tcpLive) empty() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns) == 0
}

// watchTCP closes a TCP-routed connection once the live table no longer
// routes its router on this entrypoint, after the entrypoint's grace
// period (graceTimeOut), unless it ended before; connections whose router
// stays are never touched by a swap. It runs from serve until the
// entrypoint stopped accepting (e.stop) and its last TCP-routed
// connection ended (shutdown closes those left after its grace).
func (e *entryPoint) watchTCP() {
	l := &e.tcpLive
	t := e.active.Load()
	var pending []removal
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	stop := e.stop
	check := time.NewTicker(time.Hour) // while stopped: polls for the last connection to end
	check.Stop()
	defer check.Stop()
	for {
		select {
		case <-t.Replaced():
			t = e.active.Load()
		case <-l.kick:
			t = e.active.Load()
		case <-timer.C:
			now := time.Now()
			for len(pending) > 0 && !pending[0].at.After(now) {
				if n := l.closeDue(pending[0]); n > 0 {
					e.log.Info("tcp router removed; closing its connections after the grace period", "router", pending[0].conns[0].router, "connections", n)
				}
				pending = pending[1:]
			}
			if len(pending) > 0 {
				timer.Reset(time.Until(pending[0].at))
			}
			continue
		case <-stop:
			stop = nil
			check.Reset(50 * time.Millisecond)
			continue
		case <-check.C:
			if l.empty() {
				return
			}
			continue
		}
		doomed := l.doom(t, e.name)
		if len(doomed) == 0 {
			continue
		}
		byRouter := map[string][]*tcpConn{}
		for _, c := range doomed {
			byRouter[c.router] = append(byRouter[c.router], c)
		}
		at := time.Now().Add(e.grace)
		for _, cs := range byRouter {
			pending = append(pending, removal{at: at, conns: cs})
		}
		if len(pending) == len(byRouter) { // the timer was idle
			timer.Reset(e.grace)
		}
	}
}
