//go:build linux

package h1

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// parker holds keep-alive connections idle for longer than idleHandoff
// without any goroutine: each is registered in one epoll set (EPOLLIN,
// one-shot) and its goroutine ends; the poller goroutine starts a new one
// when the client sends its next request, and a timer closes it at the
// idle timeout. An idle connection then costs its socket and its small
// state (no stack, no buffer).
type parker struct {
	srv    *Server
	epfd   int
	wakefd int // eventfd: wakes the poller for shutdown
	mu     sync.Mutex
	conns  map[int32]*conn
	closed bool
	done   chan struct{}
}

// parkState values of conn.parked.
const (
	notParked = iota
	parked
)

// park moves cs to the parker; false when it cannot be parked (then the
// caller continues the wait on a goroutine).
func (s *Server) park(cs *conn) bool {
	if cs.raw == nil {
		return false
	}
	p, err := s.getParker()
	if err != nil {
		return false
	}
	if cs.fd < 0 {
		if err := cs.raw.Control(func(fd uintptr) { cs.fd = int32(fd) }); err != nil {
			return false
		}
	}
	wait := time.Until(cs.idleUntil)
	if cs.idleUntil.Equal(noIdleTimeout) {
		wait = -1
	} else if wait < 100*time.Millisecond {
		return false // about to time out: not worth parking
	}
	if cs.watchTimer != nil { // not running (the request ended): rebuilt on need
		cs.watchTimer, cs.watchDone = nil, nil
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return false
	}
	p.conns[cs.fd] = cs
	cs.parked.Store(parked)
	if wait >= 0 { // armed under mu: the poller sees the timer it may stop
		if cs.idleTimer == nil {
			cs.idleTimer = time.AfterFunc(wait, func() { p.expire(cs) })
		} else {
			cs.idleTimer.Reset(wait)
		}
	}
	p.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: cs.fd}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, int(cs.fd), &ev); err != nil {
		p.unregister(cs)
		if !cs.parked.CompareAndSwap(parked, notParked) {
			return true // the idle timer already closed it
		}
		return false
	}
	return true
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
		p := &parker{srv: s, epfd: epfd, wakefd: wakefd, conns: map[int32]*conn{}, done: make(chan struct{})}
		s.parker = p
		s.spawn(p.poll)
	})
	return s.parker, s.parkErr
}

// unregister removes cs from the set (before its socket may close, so a
// reused descriptor never meets a stale entry).
func (p *parker) unregister(cs *conn) {
	p.mu.Lock()
	if p.conns[cs.fd] == cs {
		delete(p.conns, cs.fd)
	}
	p.mu.Unlock()
	_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, int(cs.fd), nil)
}

// expire closes a connection still parked at its idle timeout.
func (p *parker) expire(cs *conn) {
	if cs.parked.CompareAndSwap(parked, notParked) {
		p.unregister(cs)
		cs.closeNow()
	}
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
			p.mu.Lock()
			cs := p.conns[ev.Fd]
			var timer *time.Timer
			if cs != nil {
				timer = cs.idleTimer
			}
			p.mu.Unlock()
			if cs == nil || !cs.parked.CompareAndSwap(parked, notParked) {
				continue
			}
			p.unregister(cs)
			if timer != nil {
				timer.Stop()
			}
			p.srv.spawn(cs.resume)
		}
		if stop {
			break
		}
	}
	p.mu.Lock()
	p.closed = true
	left := make([]*conn, 0, len(p.conns))
	for _, cs := range p.conns {
		left = append(left, cs)
	}
	p.mu.Unlock()
	for _, cs := range left {
		p.expire(cs)
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
