//go:build linux

// Package rawtcp dials TCP connections on raw non-blocking sockets for the
// TCP proxy's servers, and moves bytes between two TCP sockets with
// splice(2).
//
// A dial is socket, setsockopt(TCP_NODELAY), connect, and the socket's
// registration with Go's poller (os.NewFile: fcntl(F_GETFL), epoll_ctl),
// then one more connect to read the outcome (0 or EISCONN: connected;
// EALREADY: still in progress, wait until writable and ask again; else
// the error). net.Dialer adds a getsockopt(SO_ERROR), a getpeername and a
// getsockname, and a deadline context with its timer and a resolver pass
// per dial; here the local address is read only when asked (LocalAddr).
package rawtcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Conn is a TCP connection over a socket Dial made: a net.Conn whose
// reads, writes and deadlines go through Go's poller (an *os.File). Errors
// are *net.OpError like *net.TCPConn's; after Close they wrap
// net.ErrClosed. Safe for concurrent use as net.Conn.
type Conn struct {
	f      *os.File
	rc     syscall.RawConn // f's
	remote netip.AddrPort
	closed atomic.Bool
}

// Dial connects to addr (an IP address and port; an IPv4-mapped IPv6
// address dials IPv4, as net.Dial does) and returns the connection.
// Waiting for the handshake is bounded by timeout (none when 0), by ctx's
// deadline and by ctx's cancellation, whichever ends first. keepAlive,
// when enabled, is set on the socket before the connect (SO_KEEPALIVE,
// TCP_KEEPIDLE and TCP_KEEPINTVL in whole seconds, rounded up; TCP_KEEPCNT
// when Count > 0). Errors are *net.OpError with Op "dial": a refused or
// unreachable server wraps the connect's errno (os.SyscallError), a
// timeout os.ErrDeadlineExceeded ("i/o timeout"), a cancellation ctx's
// error. The socket is closed on every error.
func Dial(ctx context.Context, addr netip.AddrPort, timeout time.Duration, keepAlive net.KeepAliveConfig) (*Conn, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	if err := ctx.Err(); err != nil {
		return nil, dialError(addr, err)
	}
	if !addr.IsValid() || addr.Addr().Zone() != "" {
		return nil, dialError(addr, fmt.Errorf("rawtcp: address %q: want an IP address without zone and a port", addr))
	}
	family, sa := sockaddr(addr)
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return nil, dialError(addr, os.NewSyscallError("socket", err))
	}
	if err := setOptions(fd, keepAlive); err != nil {
		_ = unix.Close(fd)
		return nil, dialError(addr, err)
	}
	cerr := connect(fd, sa)
	if cerr != nil && cerr != unix.EINPROGRESS {
		_ = unix.Close(fd)
		return nil, dialError(addr, os.NewSyscallError("connect", cerr))
	}
	c := &Conn{f: os.NewFile(uintptr(fd), "tcp"), remote: addr} // c.f owns fd from here
	if c.rc, err = c.f.SyscallConn(); err != nil {
		_ = c.f.Close()
		return nil, dialError(addr, err)
	}
	if cerr == unix.EINPROGRESS {
		// Ask once before waiting, on fd directly (the socket is c's
		// alone yet): on loopback the handshake is usually done by now,
		// and no deadline, timer, closure or poller wait is needed.
		switch cerr = connect(fd, sa); cerr {
		case unix.EALREADY, unix.EINPROGRESS:
			cerr = c.awaitConnect(ctx, sa, timeout)
		case nil, unix.EISCONN:
			cerr = nil
		default:
			cerr = os.NewSyscallError("connect", cerr)
		}
		if cerr != nil {
			_ = c.f.Close()
			return nil, dialError(addr, cerr)
		}
	}
	return c, nil
}

// awaitConnect waits, through the poller, for the connect in progress on
// c's socket to end, bounded by timeout (none when 0) and ctx, and returns
// its outcome: nil when connected, os.SyscallError of the
// connect's errno, os.ErrDeadlineExceeded or ctx's error.
func (c *Conn) awaitConnect(ctx context.Context, sa unix.Sockaddr, timeout time.Duration) error {
	deadline, ok := ctx.Deadline()
	if timeout > 0 && (!ok || time.Until(deadline) > timeout) {
		deadline, ok = time.Now().Add(timeout), true
	}
	if ok {
		if err := c.f.SetWriteDeadline(deadline); err != nil {
			return err
		}
		defer c.f.SetWriteDeadline(time.Time{})
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = c.f.SetWriteDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	var cerr error
	err := c.rc.Write(func(fd uintptr) bool {
		cerr = connect(int(fd), sa)
		return cerr != unix.EALREADY && cerr != unix.EINPROGRESS
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return err
	case cerr == nil || cerr == unix.EISCONN:
		return nil
	}
	return os.NewSyscallError("connect", cerr)
}

// connect is connect(2), retried on EINTR.
func connect(fd int, sa unix.Sockaddr) error {
	for {
		if err := unix.Connect(fd, sa); err != unix.EINTR {
			return err
		}
	}
}

// sockaddr is addr's address family and socket address.
func sockaddr(addr netip.AddrPort) (int, unix.Sockaddr) {
	if addr.Addr().Is4() {
		return unix.AF_INET, &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()}
	}
	return unix.AF_INET6, &unix.SockaddrInet6{Port: int(addr.Port()), Addr: addr.Addr().As16()}
}

// setOptions sets TCP_NODELAY (net.Dialer's default) and keepAlive on fd.
func setOptions(fd int, keepAlive net.KeepAliveConfig) error {
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		return os.NewSyscallError("setsockopt TCP_NODELAY", err)
	}
	if keepAlive.Enable {
		return SetKeepAlive(fd, keepAlive)
	}
	return nil
}

// SetKeepAlive turns keep-alive on for socket fd with cfg's timing
// (cfg.Enable is not read): SO_KEEPALIVE, then TCP_KEEPIDLE and
// TCP_KEEPINTVL in whole seconds, rounded up (a zero Idle or Interval is
// 15s, net.Dialer's default; a negative one leaves the system's value),
// and TCP_KEEPCNT when Count > 0. The first failing setsockopt's error is
// returned (os.SyscallError naming the option).
func SetKeepAlive(fd int, cfg net.KeepAliveConfig) error {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1); err != nil {
		return os.NewSyscallError("setsockopt SO_KEEPALIVE", err)
	}
	for _, o := range []struct {
		name string
		opt  int
		d    time.Duration
	}{{"TCP_KEEPIDLE", unix.TCP_KEEPIDLE, cfg.Idle}, {"TCP_KEEPINTVL", unix.TCP_KEEPINTVL, cfg.Interval}} {
		if o.d < 0 {
			continue
		}
		if o.d == 0 {
			o.d = 15 * time.Second
		}
		secs := int((o.d + time.Second - 1) / time.Second)
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, o.opt, secs); err != nil {
			return os.NewSyscallError("setsockopt "+o.name, err)
		}
	}
	if cfg.Count > 0 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT, cfg.Count); err != nil {
			return os.NewSyscallError("setsockopt TCP_KEEPCNT", err)
		}
	}
	return nil
}

// dialError is net.Dialer's error shape: "dial tcp <addr>: <err>".
func dialError(addr netip.AddrPort, err error) error {
	return &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(addr), Err: err}
}

// opError wraps an error of c's file as *net.TCPConn reports it: io.EOF
// as is, a closed connection as net.ErrClosed.
func (c *Conn) opError(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	if errors.Is(err, os.ErrClosed) || c.closed.Load() {
		err = net.ErrClosed
	} else if pe, ok := errors.AsType[*os.PathError](err); ok {
		err = pe.Err
	}
	return &net.OpError{Op: op, Net: "tcp", Addr: net.TCPAddrFromAddrPort(c.remote), Err: err}
}

// Read reads from the connection; io.EOF at the peer's end of stream.
func (c *Conn) Read(b []byte) (int, error) {
	n, err := c.f.Read(b)
	return n, c.opError("read", err)
}

// Write writes b whole, or fails.
func (c *Conn) Write(b []byte) (int, error) {
	n, err := c.f.Write(b)
	return n, c.opError("write", err)
}

// Close closes the socket (once; later calls fail with net.ErrClosed).
// Blocked reads and writes return net.ErrClosed.
func (c *Conn) Close() error {
	c.closed.Store(true)
	return c.opError("close", c.f.Close())
}

// CloseWrite shuts the sending side down (shutdown(SHUT_WR)): the peer
// reads end of stream.
func (c *Conn) CloseWrite() error {
	var serr error
	if err := c.rc.Control(func(fd uintptr) { serr = unix.Shutdown(int(fd), unix.SHUT_WR) }); err != nil {
		return c.opError("close", err)
	}
	if serr != nil {
		return c.opError("close", os.NewSyscallError("shutdown", serr))
	}
	return nil
}

// SetKeepAliveConfig sets keep-alive as *net.TCPConn's method does: off
// when cfg.Enable is false, else cfg's values (see SetKeepAlive).
func (c *Conn) SetKeepAliveConfig(cfg net.KeepAliveConfig) error {
	var serr error
	err := c.rc.Control(func(fd uintptr) {
		if !cfg.Enable {
			serr = os.NewSyscallError("setsockopt SO_KEEPALIVE", unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE, 0))
			return
		}
		serr = SetKeepAlive(int(fd), cfg)
	})
	if err == nil {
		err = serr
	}
	return c.opError("set", err)
}

// LocalAddr is the socket's local address (getsockname, read at each
// call); the unspecified address when the socket is closed.
func (c *Conn) LocalAddr() net.Addr {
	var sa unix.Sockaddr
	_ = c.rc.Control(func(fd uintptr) { sa, _ = unix.Getsockname(int(fd)) })
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: sa.Addr[:], Port: sa.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: sa.Addr[:], Port: sa.Port}
	}
	return &net.TCPAddr{}
}

// RemoteAddr is the address dialled.
func (c *Conn) RemoteAddr() net.Addr { return net.TCPAddrFromAddrPort(c.remote) }

// SetDeadline sets the read and write deadlines (net.Conn).
func (c *Conn) SetDeadline(t time.Time) error { return c.opError("set", c.f.SetDeadline(t)) }

// SetReadDeadline sets the read deadline (net.Conn).
func (c *Conn) SetReadDeadline(t time.Time) error { return c.opError("set", c.f.SetReadDeadline(t)) }

// SetWriteDeadline sets the write deadline (net.Conn).
func (c *Conn) SetWriteDeadline(t time.Time) error {
	return c.opError("set", c.f.SetWriteDeadline(t))
}

// SyscallConn is the socket's raw connection; its errors after Close
// wrap net.ErrClosed.
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return rawConn{c}, nil }

// rawConn is Conn's syscall.RawConn, with Conn's error shapes.
type rawConn struct{ c *Conn }

func (r rawConn) Control(f func(uintptr)) error { return r.c.opError("raw-control", r.c.rc.Control(f)) }

func (r rawConn) Read(f func(uintptr) bool) error { return r.c.opError("raw-read", r.c.rc.Read(f)) }

func (r rawConn) Write(f func(uintptr) bool) error { return r.c.opError("raw-write", r.c.rc.Write(f)) }
