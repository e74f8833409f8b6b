package main

import (
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

const haveEpoll = true

// epConn is one short connection in flight in tcpEpoll.
type epConn struct {
	fd      int
	t0      time.Time
	written bool
	got     int
}

// tcpEpoll is the tcpconn loop on one OS thread with its own epoll set and
// non-blocking sockets: about half the system calls of a net.Dial client
// per connection (socket, connect, epoll_ctl, write, read until EOF,
// close), so the load side costs less than the proxy it drives. conc
// connections are kept in flight until the deadline or the count budget;
// a connection that takes longer than 10×cfg.timeout is an error.
func tcpEpoll(cfg *config, conc int, deadline time.Time, cs *counters, hist []uint64) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ap, err := netip.ParseAddrPort(cfg.addr)
	if err != nil {
		return fmt.Errorf("-addr must be ip:port for tcpconn: %w", err)
	}
	sa := &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(ep)
	req := make([]byte, cfg.req)
	for i := range req {
		req[i] = 'q'
	}
	req[len(req)-1] = '\n'
	buf := make([]byte, cfg.resp+64)
	byFd := map[int]*epConn{}
	fail := func(err error) {
		if cs.errs.Add(1) <= 5 {
			fmt.Fprintln(os.Stderr, "tcpconn:", err)
		}
	}
	closeConn := func(c *epConn) {
		delete(byFd, c.fd)
		unix.Close(c.fd) // also leaves the epoll set
	}
	open := func() {
		if !time.Now().Before(deadline) || !cs.take() {
			return
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			fail(err)
			return
		}
		c := &epConn{fd: fd, t0: time.Now()}
		if err := unix.Connect(fd, sa); err != nil && err != unix.EINPROGRESS {
			unix.Close(fd)
			fail(err)
			return
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			unix.Close(fd)
			fail(err)
			return
		}
		byFd[fd] = c
	}
	// step advances c after an event; true when c is finished (closed).
	step := func(c *epConn, events uint32) bool {
		if !c.written {
			if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
				return false
			}
			if _, err := unix.Write(c.fd, req); err != nil { // a failed connect fails here
				fail(err)
				closeConn(c)
				return true
			}
			c.written = true
		}
		for {
			k, err := unix.Read(c.fd, buf[c.got:])
			if err == unix.EAGAIN || err == unix.EINTR {
				return false
			}
			if err != nil {
				fail(err)
				closeConn(c)
				return true
			}
			if k == 0 { // EOF: the reply is complete
				if c.got != cfg.resp || buf[0] != 'r' || buf[c.got-1] != '\n' {
					fail(fmt.Errorf("%w: %d bytes, want %d", errShort, c.got, cfg.resp))
				} else {
					hist[min(int(time.Since(c.t0)/bucket), buckets)]++
					cs.total.Add(1)
				}
				closeConn(c)
				return true
			}
			c.got += k
			if c.got == len(buf) {
				fail(fmt.Errorf("reply longer than %d bytes", cfg.resp))
				closeConn(c)
				return true
			}
		}
	}
	for range conc {
		open()
	}
	events := make([]unix.EpollEvent, 256)
	lastScan := time.Now()
	for len(byFd) > 0 {
		n, err := unix.EpollWait(ep, events, 10)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range events[:n] {
			c := byFd[int(e.Fd)]
			if c != nil && step(c, e.Events) {
				open()
			}
		}
		if now := time.Now(); now.Sub(lastScan) > 50*time.Millisecond {
			lastScan = now
			for _, c := range byFd {
				if now.Sub(c.t0) > 10*cfg.timeout {
					fail(fmt.Errorf("no reply within %v", 10*cfg.timeout))
					closeConn(c)
					open()
				}
			}
		}
	}
	return nil
}
