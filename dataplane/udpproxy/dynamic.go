package udpproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
)

// EntryPointOf returns the UDP entrypoint name serves for cfg (address
// "host:port/udp", udp.timeout, transport.lifeCycle.graceTimeOut, default
// 10s), or an error when cfg's address is not a UDP one.
func EntryPointOf(name string, cfg *static.EntryPoint) (EntryPoint, error) {
	addr, proto, _ := strings.Cut(cfg.Address, "/")
	if !strings.EqualFold(proto, "udp") {
		return EntryPoint{}, fmt.Errorf("address %q is not a UDP address (…/udp)", cfg.Address)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return EntryPoint{}, fmt.Errorf("address %q: want [host]:port/udp", cfg.Address)
	}
	e := EntryPoint{Name: name, Address: addr, Grace: 10 * time.Second}
	if cfg.UDP != nil {
		e.Timeout = cfg.UDP.Timeout.D()
	}
	if t := cfg.Transport; t != nil && t.LifeCycle != nil && t.LifeCycle.GraceTimeOut > 0 {
		e.Grace = t.LifeCycle.GraceTimeOut.D()
	}
	return e, nil
}

// AddEntryPoint binds UDP entrypoint name (cfg as EntryPointOf reads it)
// on a started Server and serves it from the live table; before Start it
// only registers it. Errors name the entrypoint: a bad address, a name
// already served, a Server shut down, a failed bind (nothing is left
// open). Used by dynamic entrypoints (dataplane/entrypoints).
func (s *Server) AddEntryPoint(ctx context.Context, name string, cfg *static.EntryPoint) error {
	ep, err := EntryPointOf(name, cfg)
	if err != nil {
		return fmt.Errorf("entrypoint %s: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.addable(name); err != nil {
		return err
	}
	e := s.newEntry(ep)
	if s.rctx != nil {
		if err := s.bind(ctx, e); err != nil {
			return err
		}
		s.run(e)
	}
	s.eps = append(s.eps, e)
	return nil
}

func (s *Server) addable(name string) error {
	if s.stopped {
		return fmt.Errorf("entrypoint %s: server shut down", name)
	}
	if slices.ContainsFunc(s.eps, func(e *entry) bool { return e.Name == name }) {
		return fmt.Errorf("entrypoint %s: already served", name)
	}
	return nil
}

// RemoveEntryPoint stops serving UDP entrypoint name: its socket is closed
// when it returns (the port is free, datagrams to it are refused with ICMP
// port unreachable) and its sessions end at once, since their replies
// would leave through that socket; grace is not used. done is closed.
// Errors: name not served, or Shutdown began.
func (s *Server) RemoveEntryPoint(name string, grace time.Duration) (done <-chan struct{}, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.take(name)
	if err != nil {
		return nil, err
	}
	e.end(true)
	ch := make(chan struct{})
	close(ch)
	return ch, nil
}

// take removes name from s.eps; s.mu is held.
func (s *Server) take(name string) (*entry, error) {
	if s.stopped {
		return nil, fmt.Errorf("entrypoint %s: server shut down", name)
	}
	i := slices.IndexFunc(s.eps, func(e *entry) bool { return e.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("entrypoint %s: not served", name)
	}
	e := s.eps[i]
	s.eps = slices.Delete(s.eps, i, i+1)
	return e, nil
}

// end stops e's goroutines and closes its sessions' upstream sockets, and
// its own socket when closeConn.
func (e *entry) end(closeConn bool) {
	if e.stop != nil {
		e.stop()
	}
	if e.conn != nil {
		if closeConn {
			_ = e.conn.Close()
		} else {
			_ = e.conn.SetReadDeadline(time.Now()) // the read loop sees its context ended
		}
	}
	e.mu.Lock()
	for _, ss := range e.sessions {
		if ss.up != nil {
			_ = ss.up.Close()
		}
	}
	e.mu.Unlock()
}

// ReplaceEntryPoint serves UDP entrypoint name with cfg from now on. On
// the same address the new settings take over the very socket (no moment
// when datagrams are refused; the old sessions end and clients get new
// ones); on another address the new socket is bound first, then the old
// one closed. On error the old entrypoint serves as before. done is
// closed.
func (s *Server) ReplaceEntryPoint(ctx context.Context, name string, cfg *static.EntryPoint, grace time.Duration) (done <-chan struct{}, err error) {
	ep, err := EntryPointOf(name, cfg)
	if err != nil {
		return nil, fmt.Errorf("entrypoint %s: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.eps, func(e *entry) bool { return e.Name == name })
	switch {
	case s.stopped:
		return nil, fmt.Errorf("entrypoint %s: server shut down", name)
	case i < 0:
		return nil, fmt.Errorf("entrypoint %s: not served", name)
	}
	old, e := s.eps[i], s.newEntry(ep)
	ch := make(chan struct{})
	close(ch)
	if s.rctx == nil {
		s.eps[i] = e
		return ch, nil
	}
	if old.conn != nil && sameUDP(ep.Address, old.conn.LocalAddr()) {
		old.end(false)
		<-old.served // its read loop is out: the socket is the new one's alone
		if err := old.conn.SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, net.ErrClosed) {
			return nil, fmt.Errorf("entrypoint %s: %w", name, err)
		}
		e.conn, e.pktinfo = old.conn, old.pktinfo
	} else {
		if err := s.bind(ctx, e); err != nil {
			return nil, err
		}
		old.end(true)
	}
	s.eps[i] = e
	s.run(e)
	return ch, nil
}

// sameUDP reports whether bound address a serves the configured
// "host:port" (same port, or any for 0; same IP, the wildcard for "").
func sameUDP(configured string, a net.Addr) bool {
	ua, ok := a.(*net.UDPAddr)
	if !ok {
		return false
	}
	want, err := net.ResolveUDPAddr("udp", configured)
	if err != nil || (want.Port != 0 && want.Port != ua.Port) {
		return false
	}
	if len(want.IP) == 0 || want.IP.IsUnspecified() {
		return ua.IP.IsUnspecified()
	}
	return want.IP.Equal(ua.IP)
}
