package dataplane

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// Shutdown stops every entrypoint gracefully, in parallel: keep accepting
// for requestAcceptGraceTimeout (if set), then stop accepting, let requests
// in flight (WebSocket connections included) finish within graceTimeOut
// (default 10s), then close whatever is left. After HandedOver (a new
// binary serves on the same sockets) upgraded connections (WebSockets and
// other Upgrade tunnels, TCP-routed connections) get the entrypoint's
// upgradedGraceTimeOut instead (default 5m): everything else is closed at
// graceTimeOut, they run on until they end or that bound. Drains of
// replaced entrypoints in progress cut their upgraded connections at most
// graceTimeOut from now. It returns ctx's error if ctx ends first (what is
// left is then closed), else nil.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		close(s.stopping)
	}
	eps := slices.Collect(maps.Values(s.eps))
	s.mu.Unlock()
	stop := context.AfterFunc(ctx, s.drain) // drains of removed entrypoints end with ctx too
	defer stop()
	var wg sync.WaitGroup
	for _, ep := range eps {
		var upgraded time.Duration
		if ep.handedOver.Load() {
			upgraded = ep.upgradedGrace
		}
		wg.Go(func() { ep.shutdown(ctx, ep.acceptGrace, ep.grace, upgraded, nil) })
	}
	wg.Wait()
	s.wg.Wait()
	return ctx.Err()
}

// ShutdownBound is how long Shutdown may take from now, at most: the
// longest requestAcceptGraceTimeout + graceTimeOut of the entrypoints
// served, or upgradedGraceTimeOut for those a new binary took over
// (HandedOver). A caller bounding Shutdown's context adds its own margin.
func (s *Server) ShutdownBound() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var d time.Duration
	for _, ep := range s.eps {
		d = max(d, ep.acceptGrace+ep.grace)
		if ep.handedOver.Load() {
			d = max(d, ep.acceptGrace+ep.upgradedGrace)
		}
	}
	return d
}

// shutdown keeps accepting for acceptGrace, then stops accepting and gives
// the connections grace to finish (see Shutdown). With upgradedGrace above
// grace, upgraded connections are not waited for within grace: once the
// other requests are done or grace is over, everything but them is closed
// and they get until upgradedGrace from the drain's start (drainUpgraded);
// cut, when closed, shortens that to grace from then (the process is
// shutting down).
func (e *entryPoint) shutdown(ctx context.Context, acceptGrace, grace, upgradedGrace time.Duration, cut <-chan struct{}) {
	if acceptGrace > 0 {
		t := time.NewTimer(acceptGrace)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	start := time.Now()
	long := upgradedGrace > grace
	gctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	e.draining.Store(true) // h1 connections close after their response
	e.closeListeners()
	// Connections accepted but silent so far are cut (as net/http does with
	// new idle ones); those whose first byte arrived are handed to their
	// server before it stops accepting, so their request is served. Accept
	// loops are waited for first, so no accepted connection is missed.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	waitFor := func(busy func() bool) {
		for busy() && gctx.Err() == nil {
			select {
			case <-tick.C:
			case <-gctx.Done():
			}
		}
	}
	waitFor(func() bool { return e.loops.Load() > 0 })
	e.mu.Lock()
	servers := slices.Clone(e.servers)
	for c := range e.conns {
		// Not sniffed yet, or idle in h1 between requests (after a
		// request in progress the connection sees draining and closes).
		// A successor serving on the same sockets (ReplaceEntryPoint) makes
		// a connection not sniffed yet a new client's: it is served.
		if (!c.sniffed.Load() && !e.handedOver.Load()) || c.idle.Load() {
			_ = c.Conn.SetReadDeadline(time.Now())
		}
	}
	h1s := slices.Clone(e.h1s)
	e.mu.Unlock()
	for _, s := range h1s {
		s.CloseIdle() // idle connections parked without a goroutine
	}
	waitFor(func() bool { return e.sniffers.Load() > 0 })
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Go(func() { _ = srv.Shutdown(gctx) })
	}
	wg.Go(func() { e.shutdownH3(gctx) })
	wg.Wait()
	// Shutdown does not wait for hijacked (upgraded) connections; their
	// handlers are still counted in flight. h1 connections are waited for
	// until their response is written (the handler returns before that).
	// With the longer drain, upgraded connections are left out here.
	waitFor(func() bool {
		n := e.inflight.Load()
		if long {
			n -= e.upgraded.Load()
		}
		return n > 0 || e.h1busy.Load() > 0
	})
	if long {
		e.drainUpgraded(ctx, start.Add(upgradedGrace), grace, cut)
	}
	e.mu.Lock()
	left := make([]*trackedConn, 0, len(e.conns))
	for c := range e.conns {
		left = append(left, c)
	}
	e.conns = nil
	chans := e.chans
	e.mu.Unlock()
	switch {
	case len(left) > 0 && long:
		e.log.Warn("upgradedGraceTimeOut over; closing connections", "connections", len(left), "upgraded", e.upgraded.Load())
	case len(left) > 0 && gctx.Err() != nil:
		e.log.Warn("grace period over; closing connections", "connections", len(left), "inFlight", e.inflight.Load())
	}
	if len(left) > 0 {
		e.cutOnce.Do(func() { close(e.cutTCP) })
	}
	for _, c := range left {
		_ = c.Conn.Close()
	}
	for _, srv := range servers {
		_ = srv.Close()
	}
	for _, l := range chans {
		_ = l.Close()
	}
}

// drainUpgraded closes every connection of the draining entrypoint but the
// upgraded ones (requests still in flight are over their grace), then
// waits until the upgraded ones have ended, deadline passes, ctx ends, or
// cut closes and grace passes after it.
func (e *entryPoint) drainUpgraded(ctx context.Context, deadline time.Time, grace time.Duration, cut <-chan struct{}) {
	e.mu.Lock()
	var others []*trackedConn
	for c := range e.conns {
		if !c.upgradedNow() {
			others = append(others, c)
		}
	}
	servers := slices.Clone(e.servers)
	e.mu.Unlock()
	for _, c := range others {
		_ = c.Conn.Close()
	}
	for _, srv := range servers {
		_ = srv.Close() // HTTP/2 connections
	}
	n := e.upgraded.Load()
	if n == 0 {
		return
	}
	e.log.Info("entrypoint drained but for its upgraded connections: they run until they end or upgradedGraceTimeOut",
		"upgraded", n, "until", deadline.Format(time.RFC3339))
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for e.upgraded.Load() > 0 {
		select {
		case <-tick.C:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		case <-cut:
			cut = nil
			if until := time.Until(deadline); grace < until {
				timer.Reset(grace)
			}
		}
	}
}
