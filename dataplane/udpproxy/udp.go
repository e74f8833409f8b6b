// Package udpproxy serves UDP entrypoints: one router per entrypoint (no
// rules), one session per client address with its own upstream socket,
// idle timeout per entrypoint (udp.timeout, default 3s, Traefik's), and
// replies sent from the local address the client sent to.
//
// Sessions live outside generations: a swap that keeps the entrypoint's
// router keeps them; when the router is gone they end after the grace
// period. The first datagram of a session is forwarded synchronously
// (the upstream socket is created before it is read on), so it is never
// lost whatever the timeout (Traefik bug 13044, case 046).
// Source: traefik pkg/udp (conn.go, proxy.go).
package udpproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/gantry-proxy/gantry/dataplane/handoff"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/routestats"
)

// Defaults.
const (
	DefaultTimeout = 3 * time.Second
	maxDatagram    = 65535
	// maxSessions bounds the sessions of all UDP entrypoints together (a
	// stranger can open one per source address, and UDP sources are
	// cheap to forge); datagrams of new clients beyond it are dropped
	// until sessions expire. Each session holds a socket, so the bound is
	// also at most a quarter of the process's file descriptor limit
	// (sessionLimit): a flood must not leave the TCP entrypoints unable to
	// accept (EMFILE).
	maxSessions = 65536
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

// EntryPoint is one UDP entrypoint's settings.
type EntryPoint struct {
	Name    string
	Address string        // "host:port" (the "/udp" suffix removed)
	Timeout time.Duration // session idle timeout; 0 means DefaultTimeout
	Grace   time.Duration // how long sessions of a removed router live on
}

// Server serves UDP entrypoints from the live table.
type Server struct {
	log    *slog.Logger
	active *router.Active
	cap    *sessionCap
	wg     sync.WaitGroup
	// mu guards eps and the run state (dynamic entrypoints, dynamic.go,
	// add and remove entrypoints while serving).
	mu      sync.Mutex
	eps     []*entry
	rctx    context.Context // the serving context, set by Start
	stopped bool            // Shutdown began
	cancel  context.CancelFunc
	// inherit holds the sockets of the binary upgrade (handoff.go).
	inherit *handoff.Inherited
}

type entry struct {
	EntryPoint
	conn *net.UDPConn
	// dial connects a session's socket to its server (net.Dialer's;
	// tests replace it).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// pktinfo is set when the socket is bound to a wildcard address and
	// the kernel reports each datagram's destination (IP_PKTINFO and, on
	// a dual-stack or IPv6 socket, IPV6_RECVPKTINFO).
	pktinfo bool
	log     *slog.Logger
	cap     *sessionCap // shared by the Server's entrypoints
	// stop ends this entrypoint's goroutines (set when it runs); served
	// is closed when its read loop has returned.
	stop   context.CancelFunc
	served chan struct{}

	mu       sync.Mutex
	sessions map[netip.AddrPort]*session
}

// NewServer returns a Server for eps (not listening yet).
func NewServer(log *slog.Logger, active *router.Active, eps []EntryPoint) *Server {
	s := &Server{log: log, active: active, cap: &sessionCap{max: sessionLimit(nofileLimit())}}
	for _, e := range eps {
		s.eps = append(s.eps, s.newEntry(e))
	}
	return s
}

func (s *Server) newEntry(e EntryPoint) *entry {
	if e.Timeout <= 0 {
		e.Timeout = DefaultTimeout
	}
	return &entry{EntryPoint: e, log: s.log.With("entrypoint", e.Name), cap: s.cap,
		dial: (&net.Dialer{}).DialContext, sessions: map[netip.AddrPort]*session{}}
}

// Start binds every entrypoint and starts serving; errors name the
// entrypoint and address, and close what was already bound.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.eps {
		if err := s.bind(ctx, e); err != nil {
			s.closeAll()
			return err
		}
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.rctx, s.cancel = rctx, cancel
	for _, e := range s.eps {
		s.run(e)
	}
	return nil
}

// bind opens e's socket (or takes the inherited one); errors name the
// entrypoint and address.
func (s *Server) bind(ctx context.Context, e *entry) error {
	pc, err := s.inherited(e) // binary upgrade (handoff.go)
	if err == nil && pc == nil {
		var lc net.ListenConfig
		pc, err = lc.ListenPacket(ctx, "udp", e.Address)
	}
	if err != nil {
		return fmt.Errorf("entrypoint %s: listen on %s/udp: %w", e.Name, e.Address, err)
	}
	e.conn = pc.(*net.UDPConn)
	e.pktinfoOn()
	return nil
}

// pktinfoOn asks for each datagram's destination on a wildcard socket.
func (e *entry) pktinfoOn() {
	la := e.conn.LocalAddr().(*net.UDPAddr)
	if la.IP == nil || la.IP.IsUnspecified() {
		// Wildcard bind: learn each datagram's destination address
		// and reply from it, so that a client that sent to one of
		// several addresses gets the answer from that address
		// (Traefik issue 7430). IPv4 datagrams on a dual-stack socket
		// carry IP_PKTINFO, IPv6 ones IPV6_PKTINFO.
		ok4 := ipv4.NewPacketConn(e.conn).SetControlMessage(ipv4.FlagDst, true) == nil
		ok6 := la.IP.To4() == nil && ipv6.NewPacketConn(e.conn).SetControlMessage(ipv6.FlagDst, true) == nil
		e.pktinfo = ok4 || ok6
	}
}

// run starts e's read loop and its router watch under s.rctx; they end
// with e.stop (or Shutdown). s.mu is held.
func (s *Server) run(e *entry) {
	ctx, stop := context.WithCancel(s.rctx)
	e.stop, e.served = stop, make(chan struct{})
	s.log.Info("entrypoint listening", "entrypoint", e.Name, "address", e.conn.LocalAddr().String()+"/udp")
	s.wg.Go(func() {
		defer close(e.served)
		e.serve(ctx, s.active, &s.wg)
	})
	s.wg.Go(func() { e.watch(ctx, s.active) })
}

// Addr returns the bound address of entryPoint, or nil.
func (s *Server) Addr(entryPoint string) net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.eps {
		if e.Name == entryPoint && e.conn != nil {
			return e.conn.LocalAddr()
		}
	}
	return nil
}

// closeAll closes every socket; s.mu is held.
func (s *Server) closeAll() {
	for _, e := range s.eps {
		if e.conn != nil {
			_ = e.conn.Close()
		}
	}
}

// Shutdown stops reading, ends every session and waits for the goroutines.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true
	if s.cancel != nil {
		s.cancel()
	}
	s.closeAll()
	eps := slices.Clone(s.eps)
	s.mu.Unlock()
	for _, e := range eps {
		e.mu.Lock()
		for _, ss := range e.sessions {
			if ss.up != nil {
				_ = ss.up.Close()
			}
		}
		e.mu.Unlock()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
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

// read reads one datagram and the local address it was sent to (invalid
// without pktinfo).
func (e *entry) read(buf, oob []byte) (int, netip.AddrPort, netip.Addr, error) {
	if !e.pktinfo {
		n, src, err := e.conn.ReadFromUDPAddrPort(buf)
		return n, unmap(src), netip.Addr{}, err
	}
	n, oobn, _, src, err := e.conn.ReadMsgUDPAddrPort(buf, oob)
	var dst netip.Addr
	if err == nil && oobn > 0 {
		var c4 ipv4.ControlMessage
		if c4.Parse(oob[:oobn]) == nil && c4.Dst != nil {
			dst, _ = netip.AddrFromSlice(c4.Dst)
		}
		var c6 ipv6.ControlMessage
		if !dst.IsValid() && c6.Parse(oob[:oobn]) == nil && c6.Dst != nil {
			dst, _ = netip.AddrFromSlice(c6.Dst)
		}
	}
	return n, unmap(src), dst.Unmap(), err
}

func unmap(a netip.AddrPort) netip.AddrPort { return netip.AddrPortFrom(a.Addr().Unmap(), a.Port()) }

func udpAddrPort(a net.Addr) netip.AddrPort {
	if ua, ok := a.(*net.UDPAddr); ok {
		ap := ua.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// reply writes b to the session's client from the session's local
// address (IP_PKTINFO / IPV6_PKTINFO source), when known.
func (e *entry) reply(ss *session, b []byte) error {
	to := ss.client
	if !ss.local.IsValid() {
		_, _, err := e.conn.WriteMsgUDPAddrPort(b, nil, to)
		return err
	}
	var oob []byte
	if ss.local.Is4() {
		oob = (&ipv4.ControlMessage{Src: ss.local.AsSlice()}).Marshal()
		if la := e.conn.LocalAddr().(*net.UDPAddr); la.IP.To4() == nil {
			to = netip.AddrPortFrom(netip.AddrFrom16(to.Addr().As16()), to.Port()) // dual-stack socket
		}
	} else {
		oob = (&ipv6.ControlMessage{Src: ss.local.AsSlice()}).Marshal()
	}
	_, _, err := e.conn.WriteMsgUDPAddrPort(b, oob, to)
	return err
}

// serve reads datagrams until the socket is closed. A datagram of a known
// client goes to its session's upstream socket; a new client's first
// datagram creates the session (picking the server) and is written at
// once, before the session's reply loop starts.
func (e *entry) serve(ctx context.Context, active *router.Active, wg *sync.WaitGroup) {
	buf := make([]byte, maxDatagram)
	oob := make([]byte, 256)
	for {
		n, src, local, err := e.read(buf, oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				return
			}
			e.log.Debug("udp read failed", "error", err)
			continue
		}
		now := time.Now()
		e.mu.Lock()
		ss := e.sessions[src]
		if ss != nil {
			ss.last = now
			if ss.up == nil { // its server's name is being resolved
				if len(ss.pending) < maxPending && ss.pendingBytes+n <= maxPendingBytes {
					ss.pending = append(ss.pending, bytes.Clone(buf[:n]))
					ss.pendingBytes += n
				}
				e.mu.Unlock()
				continue
			}
		}
		e.mu.Unlock()
		if ss == nil {
			e.open(ctx, active, src, local, now, buf[:n], wg)
			continue
		}
		e.forward(ss, buf[:n])
	}
}

// maxPending and maxPendingBytes bound the datagrams kept for a session
// whose server's host name is being resolved (beyond the first); later
// ones are dropped.
const (
	maxPending      = 16
	maxPendingBytes = 64 << 10
)

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

// watch marks the sessions of a router that left the entrypoint to expire
// after the grace period; sessions of a kept router are untouched.
func (e *entry) watch(ctx context.Context, active *router.Active) {
	t := active.Load()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.Replaced():
		}
		t = active.Load()
		cur := ""
		if rt := t.UDP(e.Name); rt != nil {
			cur = rt.Name
		}
		now := time.Now()
		e.mu.Lock()
		for _, ss := range e.sessions {
			switch {
			case ss.router != cur && ss.expire.IsZero():
				ss.expire = now.Add(e.Grace)
			case ss.router == cur:
				ss.expire = time.Time{}
			}
		}
		e.mu.Unlock()
	}
}
