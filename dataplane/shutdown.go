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
// (default 10s), then close whatever is left. It returns ctx's error if ctx
// ends first, else nil.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true
	eps := slices.Collect(maps.Values(s.eps))
	s.mu.Unlock()
	stop := context.AfterFunc(ctx, s.drain) // drains of removed entrypoints end with ctx too
	defer stop()
	var wg sync.WaitGroup
	for _, ep := range eps {
		wg.Go(func() { ep.shutdown(ctx, ep.acceptGrace, ep.grace) })
	}
	wg.Wait()
	s.wg.Wait()
	return ctx.Err()
}

// shutdown keeps accepting for acceptGrace, then stops accepting and gives
// the connections grace to finish (see Shutdown).
func (e *entryPoint) shutdown(ctx context.Context, acceptGrace, grace time.Duration) {
	if acceptGrace > 0 {
		t := time.NewTimer(acceptGrace)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
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
	waitFor(func() bool { return e.inflight.Load() > 0 || e.h1busy.Load() > 0 })
	e.mu.Lock()
	left := make([]*trackedConn, 0, len(e.conns))
	for c := range e.conns {
		left = append(left, c)
	}
	e.conns = nil
	chans := e.chans
	e.mu.Unlock()
	if len(left) > 0 && gctx.Err() != nil {
		e.log.Warn("grace period over; closing connections", "connections", len(left), "inFlight", e.inflight.Load())
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
