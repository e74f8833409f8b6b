package dataplane

import (
	"context"
	"fmt"
	"maps"
	"net"
	"strconv"

	"github.com/gantry-proxy/gantry/dataplane/handoff"
)

// Inherit makes Start serve on the sockets a previous Gantry passed (the
// binary upgrade, package handoff) instead of binding, for every entrypoint
// whose address is the inherited socket's; the others bind as usual. Call
// it before Start; in may be nil.
func (s *Server) Inherit(in *handoff.Inherited) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inherit = in
	for _, ep := range s.eps {
		ep.inherit = in
	}
}

// Sockets returns a duplicate of every listening socket (TCP listeners under
// "tcp/<entrypoint>", the HTTP/3 UDP socket under "h3/<entrypoint>") for a
// new process; the caller closes the files.
func (s *Server) Sockets() ([]handoff.Socket, error) {
	var out []handoff.Socket
	fail := func(err error) ([]handoff.Socket, error) {
		for _, so := range out {
			_ = so.File.Close()
		}
		return nil, err
	}
	s.mu.Lock()
	eps := maps.Clone(s.eps)
	s.mu.Unlock()
	for name, ep := range eps {
		ep.mu.Lock()
		ls := append([]net.Listener(nil), ep.listeners...)
		ep.mu.Unlock()
		for _, l := range ls {
			tl, ok := l.(*net.TCPListener)
			if !ok {
				return fail(fmt.Errorf("entrypoint %s: listener %T cannot be passed", name, l))
			}
			f, err := tl.File()
			if err != nil {
				return fail(fmt.Errorf("entrypoint %s: %w", name, err))
			}
			out = append(out, handoff.Socket{Key: "tcp/" + name, File: f})
		}
		if ep.h3 != nil && ep.h3.pc != nil {
			uc, ok := ep.h3.pc.(*net.UDPConn)
			if !ok {
				return fail(fmt.Errorf("entrypoint %s: http3 socket %T cannot be passed", name, ep.h3.pc))
			}
			f, err := uc.File()
			if err != nil {
				return fail(fmt.Errorf("entrypoint %s: http3: %w", name, err))
			}
			out = append(out, handoff.Socket{Key: "h3/" + name, File: f})
		}
	}
	return out, nil
}

// adopt takes the listeners inherited for e when they are bound to e's
// address (any port for port 0), and opens more SO_REUSEPORT listeners on
// the same socket address up to listenerCount. It returns false when
// nothing was inherited (the inherited sockets of a changed address are
// closed: e binds anew).
func (e *entryPoint) adopt(ctx context.Context) (bool, error) {
	ls, err := e.inherit.Listeners("tcp/" + e.name)
	if err != nil || len(ls) == 0 {
		return false, err
	}
	if !sameAddr(e.address, ls[0].Addr()) {
		e.log.Warn("upgrade: inherited socket has another address; binding anew", "inherited", ls[0].Addr().String(), "address", e.address)
		for _, l := range ls {
			_ = l.Close()
		}
		return false, nil
	}
	for _, l := range ls {
		if err := inheritKeepAlive(l); err != nil { // its connections go without probes
			e.log.Warn("upgrade: inherited socket", "address", l.Addr().String(), "error", err)
		}
	}
	e.mu.Lock()
	e.listeners = append(e.listeners, ls...)
	e.mu.Unlock()
	addr := ls[0].Addr().String()
	for range listenerCount() - len(ls) {
		l, err := listenConfig().Listen(ctx, "tcp", addr)
		if err != nil {
			return true, err
		}
		e.mu.Lock()
		e.listeners = append(e.listeners, l)
		e.mu.Unlock()
	}
	e.log.Info(e.inherit.Origin()+": serving on inherited sockets", "address", addr, "inherited", len(ls))
	return true, nil
}

// inheritedH3 returns the HTTP/3 socket inherited for e on port, or nil.
func (e *entryPoint) inheritedH3(port int) (net.PacketConn, error) {
	pc, err := e.inherit.PacketConn("h3/" + e.name)
	if err != nil || pc == nil {
		return nil, err
	}
	if ua, ok := pc.LocalAddr().(*net.UDPAddr); !ok || ua.Port != port {
		_ = pc.Close()
		return nil, nil
	}
	return pc, nil
}

// sameAddr reports whether the bound address a serves the configured
// "host:port": the same port (any for "0") and the same IP (the wildcard
// for an empty host; a name is resolved).
func sameAddr(configured string, a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return false
	}
	host, port, err := net.SplitHostPort(configured)
	if err != nil {
		return false
	}
	if p, err := strconv.Atoi(port); err != nil || (p != 0 && p != ta.Port) {
		return false
	}
	if host == "" {
		return ta.IP.IsUnspecified()
	}
	want, err := net.ResolveTCPAddr("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return false
	}
	return want.IP.Equal(ta.IP) || (want.IP.IsUnspecified() && ta.IP.IsUnspecified())
}
