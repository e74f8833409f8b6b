package dataplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/coalesce"
	"github.com/gantry-proxy/gantry/dataplane/conninfo"
	"github.com/gantry-proxy/gantry/dataplane/h1"
	"github.com/gantry-proxy/gantry/internal/replayconn"
)

// listen opens listenerCount() SO_REUSEPORT listeners on the address; with
// port 0 the first one picks the port and the others join it.
//
// SO_REUSEPORT would let a second process of the same user share a busy
// port silently (splitting its traffic); a plain bind first makes a busy
// port fail Start as without SO_REUSEPORT.
func (e *entryPoint) listen(ctx context.Context) error {
	if ok, err := e.adopt(ctx); ok || err != nil { // binary upgrade
		if err != nil {
			return err
		}
		return e.listenH3(ctx)
	}
	lc := listenConfig()
	addr := e.address
	if _, port, _ := net.SplitHostPort(addr); port != "0" {
		probe, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		if err := probe.Close(); err != nil {
			return fmt.Errorf("close probe listener: %w", err)
		}
	}
	for i := range listenerCount() {
		l, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.listeners = append(e.listeners, l)
		e.mu.Unlock()
		if i == 0 {
			host, _, _ := net.SplitHostPort(addr)
			addr = net.JoinHostPort(host, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
		}
	}
	return e.listenH3(ctx)
}

func (e *entryPoint) closeListeners() {
	e.stopOnce.Do(func() { close(e.stop) })
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.listeners {
		_ = l.Close()
	}
}

// serve starts, per listener, its accept loop and its HTTP/2 server, and
// the watcher of TCP-routed connections (watchTCP). Every goroutine joins
// wg.
func (e *entryPoint) serve(wg *sync.WaitGroup) {
	e.tlsConf = &tls.Config{
		MinVersion:         tls.VersionTLS12,
		NextProtos:         []string{"h2", "http/1.1"},
		GetConfigForClient: e.configForClient,
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.listeners {
		h2 := newChanListener(l.Addr())
		hs := e.h2Server()
		e.servers = append(e.servers, hs)
		e.chans = append(e.chans, h2)
		wg.Go(func() { _ = hs.Serve(h2) })
		e.loops.Add(1)
		h1s := e.h1Server(h2, wg)
		e.h1s = append(e.h1s, h1s)
		wg.Go(func() { e.acceptLoop(l, h2, h1s, wg) })
	}
	wg.Go(e.watchTCP)
	e.serveH3(wg)
}

// acceptLoop accepts on one listener until it is closed. Each connection
// holds one of the entrypoint's connection slots: with every slot taken,
// the loop closes the oldest idle keep-alive connection and takes its slot
// (takeSlotAtCap); with none idle, it holds the connection it just accepted
// (not read, not served) until a slot frees, and accepts nothing more, so
// further connections wait in the kernel's backlog. (At most one held
// connection per listener goes past the cap.) Temporary errors (EMFILE) back off from 5ms to 1s, as
// net/http does.
func (e *entryPoint) acceptLoop(l net.Listener, h2 *chanListener, h1s *h1.Server, wg *sync.WaitGroup) {
	defer e.loops.Add(-1)
	var delay time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() || isTemporary(err) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				e.log.Warn("accept failed; retrying", "error", err, "delay", delay)
				time.Sleep(delay)
				continue
			}
			e.log.Error("accept failed; listener stopped", "error", err)
			return
		}
		delay = 0
		select {
		case e.slots <- struct{}{}:
			if e.capWarned.Load() {
				e.capWarned.Store(false)
			}
		default:
			if !e.takeSlotAtCap() {
				_ = c.Close()
				return
			}
		}
		now := time.Now()
		tc := &trackedConn{Conn: replayconn.Conn{Conn: c}, ep: e, accepted: now,
			info: &conninfo.Info{EntryPoint: e.name, Handshake: certs.Handshake{EntryPoint: e.name}, Trusted: e.trust.trusts(c.RemoteAddr()), Start: now}}
		if !e.track(tc) {
			_ = tc.Close()
			continue
		}
		e.sniffers.Add(1)
		wg.Go(func() { e.sniff(tc, h2, h1s) })
	}
}

func isTemporary(err error) bool {
	t, ok := errors.AsType[interface {
		error
		Temporary() bool
	}](err)
	return ok && t.Temporary()
}

// sniff reads the first byte and, when it starts a TLS handshake record
// (0x16), runs the handshake; a connection that negotiated h2 goes to the
// HTTP/2 server, every other one is served by h1. The header timeout runs
// from the accept for all of it. The caller counted c in e.sniffers.
// TCP routers and the PROXY protocol see the connection first (divert,
// tcpentry.go).
func (e *entryPoint) sniff(c *trackedConn, h2 *chanListener, h1s *h1.Server) {
	deadline := c.accepted.Add(e.readHeaderTimeout)
	if e.divert(c) {
		return
	}
	if c.sniffed.Load() {
		// divert read the first bytes and cleared its deadline: the
		// handshake and head still share the one from the accept.
		_ = c.SetReadDeadline(deadline)
	} else if !e.sniffFirst(c, deadline) {
		_ = c.Close()
		return
	}
	if c.Pending[0] != 0x16 {
		h1s.ServeConn(c, deadline)
		return
	}
	c.info.TLS = true
	tc := tls.Server(c, e.tlsConf)
	if err := tc.HandshakeContext(conninfo.With(context.Background(), c.info)); err != nil {
		e.log.Debug("TLS handshake failed", "remote", c.RemoteAddr().String(), "error", err)
		_ = c.Close()
		return
	}
	if tc.ConnectionState().NegotiatedProtocol == "h2" {
		_ = c.SetDeadline(time.Time{})
		c.w = coalesce.New(c.Conn.Conn)
		h2.push(tc)
		c.w.Run() // this goroutine writes the connection's frames until it closes
		return
	}
	h1s.ServeConn(tc, deadline)
}

// sniffFirst reads the first byte of c into c.Pending, bounded by deadline
// (kept for what follows), and ends c's count in e.sniffers.
func (e *entryPoint) sniffFirst(c *trackedConn, deadline time.Time) bool {
	defer e.sniffers.Add(-1)
	_ = c.SetReadDeadline(deadline)
	var b [1]byte
	if _, err := c.Conn.Conn.Read(b[:]); err != nil {
		return false
	}
	c.sniffed.Store(true)
	c.Pending = b[:]
	return true
}

// track adds c to the live set; false once shutdown closed the set.
func (e *entryPoint) track(c *trackedConn) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conns == nil {
		return false
	}
	e.conns[c] = struct{}{}
	return true
}

func (e *entryPoint) forget(c *trackedConn) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.conns, c)
}
