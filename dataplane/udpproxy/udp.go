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
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/gantry-proxy/gantry/dataplane/handoff"
	"github.com/gantry-proxy/gantry/router"
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
