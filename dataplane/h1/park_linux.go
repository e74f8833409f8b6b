//go:build linux

package h1

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// parker holds keep-alive connections idle for longer than idleHandoff
// without any goroutine: each is registered in one epoll set (EPOLLIN,
// one-shot) and its goroutine ends; the poller goroutine starts a new one
// when the client sends its next request. Idle timeouts are one timer for
// the whole set: the parked connections are kept in a list ordered by
// idleUntil (a Server's IdleTimeout is fixed, so that is the order in which
// they went idle, the oldest first; without an idle timeout, parking
// order), and the timer fires at the first one's. The same list gives
// CloseOldestParked its victim. A parked
// connection then costs its socket and its small state (no stack, no
// buffer, no timer, no map entry: the table is a slice indexed by file
// descriptor, 8 bytes a descriptor).
//
// A descriptor number is reused as soon as its socket closes, and the
// kernel drops a closed socket's epoll registration by itself. So the
// parker never trusts a bare descriptor: each park gets a generation
// number, carried in the epoll event's data beside the descriptor and kept
// in the conn. An event whose generation is not that of the connection now
// parked on its descriptor is stale and ignored, and a connection touches
// the epoll registration of its descriptor (EPOLL_CTL_DEL) only while the
// table still holds it there. If something closes a parked socket behind
// the parker's back and a new connection parks on the same descriptor,
// the old one's expiry closes only the old one.
type parker struct {
	srv    *Server
	epfd   int
	wakefd int // eventfd: wakes the poller for shutdown

	mu    sync.Mutex
	conns []*conn // under mu: parked connections by file descriptor
	gen   uint32  // under mu: the last park's generation (see parker)
	// under mu: the parked connections by idleUntil, oldest idle first
	// (ties, and connections without an idle timeout, in parking order);
	// linked through conn.pprev/pnext.
	head, tail *conn
	timer      *time.Timer // under mu: fires at head's idleUntil (or later)
	timerAt    time.Time   // under mu: when timer fires; zero when stopped
	closed     bool        // under mu
	done       chan struct{}
}

// park moves cs to the parker; false when it cannot be parked (then the
// caller continues the wait on a goroutine).
//
// A TLS connection parks too, on the socket under it: it only gets here
// after its idle Read timed out without a byte, and crypto/tls reads from
// the socket only when it holds no complete record, so whatever is next
// still has to arrive on the socket (the epoll registration is
// level-triggered: bytes already there wake it at once). Its read buffer
// is given back while it is parked; crypto/tls's own buffers stay.
func (s *Server) park(cs *conn) bool {
	if cs.fd < 0 {
		raw := cs.raw
		if raw == nil {
			raw = socketOf(cs.c)
		}
		if raw == nil {
			return false
		}
		if err := raw.Control(func(fd uintptr) { cs.fd = int32(fd) }); err != nil {
			return false
		}
	}
	p, err := s.getParker()
	if err != nil {
		return false
	}
	timed := !cs.idleUntil.Equal(noIdleTimeout)
	if timed && time.Until(cs.idleUntil) < 100*time.Millisecond {
		return false // about to time out: not worth parking
	}
	cs.releaseBuf() // TLS: the idle read's (plain connections hold none)
	// No request runs: the watch timer (perhaps still armed, or firing:
	// it then finds it was dropped) is rebuilt when a request needs it.
	cs.rdMu.Lock()
	if cs.watchTimer != nil {
		cs.watchTimer.Stop()
	}
	cs.watchTimer, cs.watchDone, cs.watchArmed = nil, nil, false
	cs.watchGen++
	cs.rdMu.Unlock()
	cs.ctx = nil
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		cs.restoreCtx()
		return false
	}
	fd := int(cs.fd)
	if fd >= len(p.conns) {
		p.conns = append(p.conns, make([]*conn, fd+1-len(p.conns))...)
		p.conns = p.conns[:cap(p.conns)]
	}
	// A connection still in the table here had its socket closed by
	// someone else (the descriptor is free again): it keeps its place in
	// the timeout list but no longer owns the descriptor.
	p.conns[fd] = cs
	p.gen++
	gen := p.gen // cs may be resumed and parked again once registered
	cs.parkGen = gen
	cs.parked = true
	p.insert(cs, timed)
	p.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(fd), Pad: int32(gen)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		p.mu.Lock()
		taken, _ := p.takeLocked(cs) // never registered: nothing to delete
		p.mu.Unlock()
		if !taken {
			return true // the idle timer already closed it
		}
		cs.restoreCtx()
		return false
	}
	if s.Parked != nil {
		s.Parked()
	}
	return true
}

// insert adds cs to the list, in idleUntil order, and arms the timer when
// cs is first and timed (it has an idle timeout). Under mu.
func (p *parker) insert(cs *conn, timed bool) {
	at := p.tail
	for at != nil && at.idleUntil.After(cs.idleUntil) {
		at = at.pprev // rarely more than a step: connections park in about idleUntil order
	}
	cs.pprev = at
	if at == nil {
		cs.pnext, p.head = p.head, cs
	} else {
		cs.pnext, at.pnext = at.pnext, cs
	}
	if cs.pnext == nil {
		p.tail = cs
	} else {
		cs.pnext.pprev = cs
	}
	if timed && p.head == cs && (p.timerAt.IsZero() || cs.idleUntil.Before(p.timerAt)) {
		p.arm(cs.idleUntil)
	}
}

// arm makes the timer fire at t. Under mu.
func (p *parker) arm(t time.Time) {
	p.timerAt = t
	if p.timer == nil {
		p.timer = time.AfterFunc(time.Until(t), p.expire)
	} else {
		p.timer.Reset(time.Until(t))
	}
}

// takeLocked removes cs from the set and the timeout list if it is still
// parked, and reports whether it was (the caller then owns cs) and whether
// it still owned its descriptor's slot, hence its epoll registration (the
// caller then deletes that registration). Under mu.
func (p *parker) takeLocked(cs *conn) (taken, owned bool) {
	if !cs.parked {
		return false, false
	}
	cs.parked = false
	if int(cs.fd) < len(p.conns) && p.conns[cs.fd] == cs {
		p.conns[cs.fd] = nil
		owned = true
	}
	if cs.pprev != nil || p.head == cs {
		if cs.pprev == nil {
			p.head = cs.pnext
		} else {
			cs.pprev.pnext = cs.pnext
		}
		if cs.pnext == nil {
			p.tail = cs.pprev
		} else {
			cs.pnext.pprev = cs.pprev
		}
		cs.pprev, cs.pnext = nil, nil
	}
	return true, owned
}

// take is takeLocked under mu, followed by the removal of cs's epoll
// registration when it still owned it (before cs's socket may close, so a
// reused descriptor never meets a stale registration).
func (p *parker) take(cs *conn) bool {
	p.mu.Lock()
	taken, owned := p.takeLocked(cs)
	if owned {
		// Under mu: a new park on this descriptor must not register
		// before this one is gone.
		_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, int(cs.fd), nil)
	}
	p.mu.Unlock()
	return taken
}

// expire runs on the timer: it closes the parked connections whose idle
// timeout has passed and re-arms the timer for the next one.
func (p *parker) expire() {
	var due []*conn
	p.mu.Lock()
	now := time.Now()
	for cs := p.head; cs != nil && cs.timed() && !cs.idleUntil.After(now); cs = p.head {
		if _, owned := p.takeLocked(cs); owned {
			_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, int(cs.fd), nil)
		}
		due = append(due, cs)
	}
	p.timerAt = time.Time{}
	if p.head != nil && p.head.timed() {
		p.arm(p.head.idleUntil)
	}
	p.mu.Unlock()
	for _, cs := range due {
		cs.closeNow()
	}
}

// timed reports whether the parked cs has an idle timeout. Under mu.
func (cs *conn) timed() bool { return !cs.idleUntil.Equal(noIdleTimeout) }

// OldestParked returns the idle deadline of the connection parked idle
// the longest (see CloseOldestParked), and false when none is parked.
// Servers with the same IdleTimeout compare by it: the earliest deadline
// went idle first. Without an IdleTimeout every deadline is the same.
func (s *Server) OldestParked() (idleUntil time.Time, ok bool) {
	p, err := s.getParker() // synchronised with its creation
	if err != nil {
		return time.Time{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.head == nil {
		return time.Time{}, false
	}
	return p.head.idleUntil, true
}

// CloseOldestParked closes the keep-alive connection parked idle the
// longest, as its idle timeout would (a connection cap reclaiming the
// slot of an idle client, as nginx does when worker_connections run out),
// and reports whether there was one. Only parked connections (idle for
// longer than idleHandoff) are candidates: a connection reading or serving
// a request, or idle for less, is never closed here. It is safe against
// every other end of a parked connection by construction: the connection
// is taken out of the set under the parker's lock (takeLocked, as the
// poller's wake-up and the idle timer do: exactly one of them owns it),
// its epoll registration is deleted before its socket closes, and a stale
// event for the descriptor is told apart by its generation number.
func (s *Server) CloseOldestParked() bool {
	p, err := s.getParker() // synchronised with its creation
	if err != nil {
		return false
	}
	p.mu.Lock()
	cs := p.head
	if cs == nil {
		p.mu.Unlock()
		return false
	}
	if _, owned := p.takeLocked(cs); owned {
		_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, int(cs.fd), nil)
	}
	// The timer stays armed for cs's deadline, or later: expire then
	// finds nothing due and re-arms for the new head.
	p.mu.Unlock()
	cs.closeNow()
	return true
}

// socketOf returns the socket under a TLS connection, or nil.
func socketOf(c net.Conn) syscall.RawConn {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return nil
	}
	sc, ok := tc.NetConn().(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}

func (s *Server) getParker() (*parker, error) {
	s.parkOnce.Do(func() {
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			s.parkErr = err
			return
		}
		wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			unix.Close(epfd)
			s.parkErr = err
			return
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wakefd)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
			unix.Close(epfd)
			unix.Close(wakefd)
			s.parkErr = err
			return
		}
		p := &parker{srv: s, epfd: epfd, wakefd: wakefd, done: make(chan struct{})}
		s.parker = p
		s.spawn(p.poll)
	})
	return s.parker, s.parkErr
}

// poll waits for parked connections to become readable and resumes each
// on a new goroutine; it ends at shutdown, closing what is still parked.
func (p *parker) poll() {
	defer close(p.done)
	events := make([]unix.EpollEvent, 128)
	for {
		n, err := unix.EpollWait(p.epfd, events, -1)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			p.srv.Log.Error("h1: epoll wait failed; parked connections are closed", "error", err)
			break
		}
		stop := false
		for _, ev := range events[:n] {
			if ev.Fd == int32(p.wakefd) {
				stop = true
				continue
			}
			var cs *conn
			p.mu.Lock()
			if int(ev.Fd) < len(p.conns) {
				cs = p.conns[ev.Fd]
			}
			if cs != nil && cs.parkGen != uint32(ev.Pad) {
				cs = nil // an event of an earlier registration of this descriptor
			}
			p.mu.Unlock()
			if cs == nil || !p.take(cs) {
				continue // closed at its idle timeout meanwhile
			}
			p.srv.spawn(cs.resume)
		}
		if stop {
			break
		}
	}
	p.mu.Lock()
	p.closed = true
	var left []*conn
	for _, cs := range p.conns {
		if cs != nil {
			left = append(left, cs)
		}
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	for _, cs := range left {
		if p.take(cs) {
			cs.closeNow()
		}
	}
	unix.Close(p.epfd)
	unix.Close(p.wakefd)
}

// CloseIdle closes every connection parked idle and stops parking: later
// idle connections wait on their goroutine (which a read deadline cuts).
// For graceful shutdown; it returns once the parked ones are closed.
func (s *Server) CloseIdle() {
	s.parkOnce.Do(func() { s.parkErr = errors.New("h1: server shut down") })
	p := s.parker
	if p == nil {
		return
	}
	var one = [8]byte{1}
	_, _ = unix.Write(p.wakefd, one[:])
	<-p.done
}
