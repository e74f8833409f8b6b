package dataplane

import (
	"context"
	"fmt"
	"maps"
	"net"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/handoff"
)

// ReplaceEntryPoint serves entrypoint name with cfg from now on, without a
// moment when its port refuses or resets a connection (a live static
// reload changing the entrypoint, cmd/gantry):
//
//   - on the same address, the new entrypoint serves on the very sockets
//     the old one listens on (duplicated descriptors, as the binary upgrade
//     passes them, package handoff): one accept queue throughout, so a
//     connection queued while the two change hands is accepted by one of
//     them, and the old one closing its copies closes nothing. A second
//     SO_REUSEPORT bind would give the new listeners their own queues and
//     the kernel would reset what is queued on the old ones when they close;
//     swapping settings under a running entrypoint would race with every
//     connection reading them. HTTP/3 takes over the UDP socket the same
//     way (QUIC connections of the old entrypoint do not survive).
//   - on another address, the new entrypoint binds it first (an error
//     leaves the old one serving).
//
// Once the new one accepts, it is the entrypoint called name, and the old
// one stops accepting and drains as RemoveEntryPoint does (grace <= 0: its
// graceTimeOut): requests in flight finish, keep-alive connections close
// after their response in progress. Upgraded connections (WebSockets,
// TCP-routed streams) are not cut at grace: they run until they end or the
// old entrypoint's upgradedGraceTimeOut (default 5m) from now, as nginx
// and HAProxy keep an old worker's connections; a Shutdown meanwhile
// cuts them at graceTimeOut from then. done is closed when the drain is
// over. Before Start it only replaces the settings.
//
// Errors name the entrypoint: not served, an invalid cfg, a failed bind,
// or a Server shut down; after an error the old entrypoint serves as
// before.
func (s *Server) ReplaceEntryPoint(ctx context.Context, name string, cfg *static.EntryPoint, grace time.Duration) (done <-chan struct{}, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.eps[name]
	switch {
	case s.stopped:
		return nil, fmt.Errorf("entrypoint %s: server shut down", name)
	case old == nil:
		return nil, fmt.Errorf("entrypoint %s: not served", name)
	}
	all := maps.Clone(s.cfgs)
	all[name] = cfg
	ep, err := s.newEntryPoint(name, cfg, all)
	if err != nil {
		return nil, fmt.Errorf("entrypoint %s: %w", name, err)
	}
	ch := make(chan struct{})
	if !s.started {
		s.eps[name], s.cfgs[name] = ep, cfg
		close(ch)
		return ch, nil
	}
	socks, err := old.socketsFor(ep.address)
	if err != nil {
		return nil, fmt.Errorf("entrypoint %s: %w", name, err)
	}
	ep.inherit = handoff.FromSockets(socks)
	err = ep.listen(ctx)
	ep.inherit.Unused() // what the new one did not take (HTTP/3 turned off)
	if err != nil {
		ep.closeListeners()
		ep.shutdownH3(ctx)
		return nil, fmt.Errorf("entrypoint %s: listen on %s: %w", name, ep.address, err)
	}
	ep.serve(&s.wg)
	s.eps[name], s.cfgs[name] = ep, cfg
	if grace <= 0 {
		grace = old.grace
	}
	kept := len(socks) > 0
	old.handedOver.Store(kept)
	old.draining.Store(true)
	old.closeListeners()
	s.log.Info("entrypoint replaced; the old settings drain", "entrypoint", name, "address", ep.listeners[0].Addr().String(), "sameSockets", kept,
		"grace", grace, "upgradedGrace", max(grace, old.upgradedGrace))
	s.wg.Go(func() {
		defer close(ch)
		old.shutdown(s.drainCtx, 0, grace, max(grace, old.upgradedGrace), s.stopping)
	})
	return ch, nil
}

// socketsFor duplicates e's listening sockets (and its HTTP/3 socket) under
// the keys adopt and listenH3 look for, when e listens on address; none
// otherwise.
func (e *entryPoint) socketsFor(address string) ([]handoff.Socket, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.listeners) == 0 || !sameAddr(address, e.listeners[0].Addr()) {
		return nil, nil
	}
	var out []handoff.Socket
	fail := func(err error) ([]handoff.Socket, error) {
		for _, so := range out {
			_ = so.File.Close()
		}
		return nil, err
	}
	for _, l := range e.listeners {
		tl, ok := l.(*net.TCPListener)
		if !ok {
			return fail(fmt.Errorf("listener %T cannot be handed over", l))
		}
		f, err := tl.File()
		if err != nil {
			return fail(err)
		}
		out = append(out, handoff.Socket{Key: "tcp/" + e.name, File: f})
	}
	if e.h3 != nil && e.h3.pc != nil {
		if uc, ok := e.h3.pc.(*net.UDPConn); ok {
			f, err := uc.File()
			if err != nil {
				return fail(fmt.Errorf("http3: %w", err))
			}
			out = append(out, handoff.Socket{Key: "h3/" + e.name, File: f})
		}
	}
	return out, nil
}

// HandedOver tells every entrypoint that another process now serves on its
// very sockets (the binary upgrade handed them over): the coming Shutdown
// serves the connections already accepted but silent so far, as new
// clients', instead of cutting them (see ReplaceEntryPoint).
func (s *Server) HandedOver() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ep := range s.eps {
		ep.handedOver.Store(true)
	}
}
