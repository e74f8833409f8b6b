package udpproxy

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/routestats"
)

// sessionLimit is the session bound for a soft RLIMIT_NOFILE of nofile
// descriptors (0: unknown): min(maxSessions, nofile/4), at least 1.
func sessionLimit(nofile uint64) int64 {
	if nofile == 0 || nofile/4 >= maxSessions {
		return maxSessions
	}
	return max(int64(nofile/4), 1)
}

// sessionCap counts the sessions of a Server's entrypoints.
type sessionCap struct {
	max    int64
	n      atomic.Int64
	warned atomic.Bool // the cap was reported since it was last left
}

// take reserves a session, or reports false at the cap (logged once per
// episode at the cap).
func (c *sessionCap) take(log *slog.Logger) bool {
	if c.n.Add(1) > c.max {
		c.n.Add(-1)
		if !c.warned.Swap(true) {
			log.Warn("udp: session limit reached; datagrams of new clients are dropped until sessions expire", "limit", c.max)
		}
		return false
	}
	return true
}

func (c *sessionCap) release() {
	if c.n.Add(-1) < c.max*9/10 {
		c.warned.Store(false)
	}
}

// session is one client's flow to one server.
type session struct {
	client netip.AddrPort
	local  netip.Addr // the address the client sent to (invalid: the socket's)
	router string
	stats  *routestats.Counters // the router's live counters
	// up is the socket connected to the server; nil (guarded by
	// entry.mu) while the server's host name is being resolved, when the
	// client's datagrams wait in pending.
	up           *net.UDPConn
	pending      [][]byte
	pendingBytes int
	last         time.Time // last datagram either way; guarded by entry.mu
	// expire, when set, ends the session at that time (its router was removed).
	expire time.Time
}

// dialTimeout bounds the connect of a session's socket (the name
// resolution of a server given by host name).
const dialTimeout = 10 * time.Second

// forward writes a client's datagram b to the session's server.
func (e *entry) forward(ss *session, b []byte) {
	if _, err := ss.up.Write(b); err != nil {
		e.log.Debug("udp write to server failed", "error", err)
		return
	}
	ss.stats.DatagramIn(len(b))
}

// open creates the session of a new client and forwards its first
// datagram first, or drops it (no router, no server, too many sessions).
// A server given by IP address is connected at once, so first is written
// before the session's reply loop starts; one given by host name is
// resolved and connected off the read loop (dialPending), with first and
// the client's next datagrams kept meanwhile, so that a slow resolver does
// not stall the entrypoint's other clients.
func (e *entry) open(ctx context.Context, active *router.Active, src netip.AddrPort, local netip.Addr, now time.Time, first []byte, wg *sync.WaitGroup) {
	rt := active.Load().UDP(e.Name)
	if rt == nil {
		return
	}
	addr, err := rt.Handler.Pick()
	if err != nil {
		e.log.Debug("udp: no server", "router", rt.Name, "error", err)
		return
	}
	if !e.cap.take(e.log) {
		return
	}
	ss := &session{client: src, local: local, router: rt.Name, stats: active.Stats().Router(rt.Name), last: now}
	ss.stats.Opened()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if _, err := netip.ParseAddr(host); err != nil {
			ss.pending = [][]byte{bytes.Clone(first)}
			e.mu.Lock()
			e.sessions[src] = ss
			e.mu.Unlock()
			wg.Go(func() { e.dialPending(ctx, ss, addr) })
			return
		}
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	c, err := e.dial(dctx, "udp", addr)
	cancel()
	if err != nil {
		e.failed(ss, addr, err)
		return
	}
	ss.up = c.(*net.UDPConn)
	e.mu.Lock()
	e.sessions[src] = ss
	e.mu.Unlock()
	e.forward(ss, first)
	wg.Go(func() { e.relay(ss) })
}

// dialPending connects the session whose server is given by host name,
// forwards the datagrams the client sent meanwhile, in order, and runs
// the session's reply loop.
func (e *entry) dialPending(ctx context.Context, ss *session, addr string) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	c, err := e.dial(dctx, "udp", addr)
	cancel()
	e.mu.Lock()
	if err != nil {
		if e.sessions[ss.client] == ss {
			delete(e.sessions, ss.client)
		}
		ss.pending = nil
		e.mu.Unlock()
		e.failed(ss, addr, err)
		return
	}
	ss.up = c.(*net.UDPConn)
	// Written under the lock so that none of the client's next datagrams
	// (read by serve, which takes the lock) overtakes them.
	for _, d := range ss.pending {
		e.forward(ss, d)
	}
	ss.pending = nil
	e.mu.Unlock()
	e.relay(ss)
}

// failed ends a session whose socket could not be connected.
func (e *entry) failed(ss *session, addr string, err error) {
	ss.stats.Closed()
	e.cap.release()
	e.log.Debug("udp dial failed", "router", ss.router, "server", addr, "error", err)
}

// relay copies the server's datagrams to the client until the session has
// been idle for the timeout (no datagram either way) or must expire. It
// holds no buffer while it waits: each datagram is read into a buffer of
// a shared pool and sent on at once (readDatagram), so a session costs
// its socket, its goroutine and its small structures, not 64 KiB.
func (e *entry) relay(ss *session) {
	defer func() {
		e.mu.Lock()
		if e.sessions[ss.client] == ss {
			delete(e.sessions, ss.client)
		}
		e.mu.Unlock()
		_ = ss.up.Close()
		ss.stats.Closed()
		e.cap.release()
	}()
	rc, err := ss.up.SyscallConn()
	if err != nil {
		return
	}
	send := func(b []byte) {
		e.mu.Lock()
		ss.last = time.Now()
		e.mu.Unlock()
		if err := e.reply(ss, b); err != nil {
			e.log.Debug("udp reply failed", "error", err)
			return
		}
		ss.stats.DatagramOut(len(b))
	}
	for {
		e.mu.Lock()
		deadline := ss.last.Add(e.Timeout)
		if !ss.expire.IsZero() && ss.expire.Before(deadline) {
			deadline = ss.expire
		}
		e.mu.Unlock()
		if !time.Now().Before(deadline) {
			return
		}
		_ = ss.up.SetReadDeadline(deadline)
		if err := readDatagram(ss.up, rc, send); err != nil {
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				continue // re-check: the client may have sent meanwhile
			}
			return // closed, or ICMP port unreachable: end the session
		}
	}
}

// datagramPool holds the read buffers of the sessions' relays: one is
// taken only while a datagram is read and sent on, so the buffers in use
// are bounded by the relays running at once, not by the sessions.
var datagramPool = sync.Pool{New: func() any { b := make([]byte, maxDatagram); return &b }}
