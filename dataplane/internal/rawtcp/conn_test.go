//go:build linux

package rawtcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gantry-proxy/gantry/internal/deaflisten"
)

// listen is a loopback listener on address addr, closed at the test's
// end (IPv6 loopback included: every machine .ci/run runs on has it).
func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ap := netip.MustParseAddrPort(l.Addr().String())
	l.Close()
	return ap
}

// TestDialExchange: a dialled connection carries bytes both ways, over
// IPv4 and IPv6, reports the addresses, and half-closes.
func TestDialExchange(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			l := listen(t, addr)
			ap := netip.MustParseAddrPort(l.Addr().String())
			c, err := Dial(context.Background(), ap, 5*time.Second, net.KeepAliveConfig{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s, err := l.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := c.RemoteAddr().String(); got != l.Addr().String() {
				t.Errorf("RemoteAddr %s, want %s", got, l.Addr())
			}
			if got, want := c.LocalAddr().String(), s.RemoteAddr().String(); got != want {
				t.Errorf("LocalAddr %s, want the server's peer %s", got, want)
			}
			if _, err := c.Write([]byte("ping")); err != nil {
				t.Fatal(err)
			}
			if err := c.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(s); err != nil || string(got) != "ping" {
				t.Fatalf("server read %q, %v; want ping and EOF", got, err)
			}
			s.Write([]byte("pong"))
			s.Close()
			if got, err := io.ReadAll(c); err != nil || string(got) != "pong" {
				t.Fatalf("client read %q, %v; want pong and EOF", got, err)
			}
			if nodelay := sockopt(t, c, unix.IPPROTO_TCP, unix.TCP_NODELAY); nodelay == 0 {
				t.Error("TCP_NODELAY not set (net.Dialer sets it)")
			}
		})
	}
}

// sockopt reads an int socket option of c.
func sockopt(t *testing.T, c syscall.Conn, level, opt int) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = unix.GetsockoptInt(int(fd), level, opt) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}

// setSockopt sets an int socket option of c.
func setSockopt(t *testing.T, c syscall.Conn, level, opt, v int) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), level, opt, v) }); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
}

// TestDialKeepAlive: an enabled keep-alive is on the socket from the
// dial, in whole seconds; SetKeepAliveConfig turns it off.
func TestDialKeepAlive(t *testing.T) {
	l := listen(t, "127.0.0.1:0")
	ka := net.KeepAliveConfig{Enable: true, Idle: 1500 * time.Millisecond, Interval: 3 * time.Second, Count: -1}
	c, err := Dial(context.Background(), netip.MustParseAddrPort(l.Addr().String()), time.Second, ka)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if on, idle, intvl := sockopt(t, c, unix.SOL_SOCKET, unix.SO_KEEPALIVE), sockopt(t, c, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE), sockopt(t, c, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL); on != 1 || idle != 2 || intvl != 3 {
		t.Fatalf("SO_KEEPALIVE %d TCP_KEEPIDLE %d TCP_KEEPINTVL %d; want 1, 2, 3", on, idle, intvl)
	}
	if err := c.SetKeepAliveConfig(net.KeepAliveConfig{}); err != nil {
		t.Fatal(err)
	}
	if on := sockopt(t, c, unix.SOL_SOCKET, unix.SO_KEEPALIVE); on != 0 {
		t.Fatal("SO_KEEPALIVE still on")
	}
}

// TestDialRefused: a refused dial fails as net.Dialer's does, with the
// same message.
func TestDialRefused(t *testing.T) {
	ap := closedPort(t)
	_, err := Dial(context.Background(), ap, time.Second, net.KeepAliveConfig{})
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial error %v, want ECONNREFUSED", err)
	}
	_, nerr := net.Dial("tcp", ap.String())
	if nerr == nil || err.Error() != nerr.Error() {
		t.Fatalf("dial error %q, net.Dial's %q", err, nerr)
	}
}

// TestDialTimeout: a connect still in progress after the timeout, or the
// context's deadline, fails with a timeout error ("i/o timeout").
func TestDialTimeout(t *testing.T) {
	ap := deaflisten.New(t)
	_, err := Dial(context.Background(), ap, 100*time.Millisecond, net.KeepAliveConfig{})
	if ne, ok := errors.AsType[net.Error](err); !ok || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("dial error %v, want a timeout", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = Dial(ctx, ap, time.Hour, net.KeepAliveConfig{})
	if ne, ok := errors.AsType[net.Error](err); !ok || !ne.Timeout() {
		t.Fatalf("dial error %v with the context's deadline, want a timeout", err)
	}
}

// TestDialCanceled: cancelling the context ends a dial in progress with
// the context's error; an already cancelled context dials nothing.
func TestDialCanceled(t *testing.T) {
	ap := deaflisten.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := Dial(ctx, ap, 0, net.KeepAliveConfig{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("dial error %v, want context.Canceled", err)
	}
	l := listen(t, "127.0.0.1:0")
	if c, err := Dial(ctx, netip.MustParseAddrPort(l.Addr().String()), 0, net.KeepAliveConfig{}); !errors.Is(err, context.Canceled) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial with a cancelled context: %v, want context.Canceled", err)
	}
}

// openFDs counts the process's open descriptors once the garbage
// collector's cleanups (of pooled pipes, of files) stopped closing any.
func openFDs(t *testing.T) int {
	t.Helper()
	prev := -1
	for range 50 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) == prev {
			break
		}
		prev = len(ents)
	}
	return prev
}

// TestDialClosesOnce: failed dials leave no descriptor open and close
// none twice (a second close would hit the descriptor opened next, here
// a pipe kept across garbage collections that run the files' cleanups);
// a Conn's second Close fails with net.ErrClosed.
func TestDialClosesOnce(t *testing.T) {
	refused, stuck := closedPort(t), deaflisten.New(t)
	before := openFDs(t)
	var keep []int
	for i := range 20 {
		ap := refused
		if i%5 == 0 {
			ap = stuck
		}
		if _, err := Dial(context.Background(), ap, 20*time.Millisecond, net.KeepAliveConfig{}); err == nil {
			t.Fatal("dial succeeded")
		}
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		keep = append(keep, p[:]...)
	}
	after := openFDs(t) - len(keep) // the files' cleanups have run
	for _, fd := range keep {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			t.Fatalf("descriptor %d opened after a failed dial was closed: %v", fd, err)
		}
		unix.Close(fd)
	}
	if after != before {
		t.Fatalf("%d descriptors open after the failed dials, %d before", after, before)
	}
	l := listen(t, "127.0.0.1:0")
	c, err := Dial(context.Background(), netip.MustParseAddrPort(l.Addr().String()), time.Second, net.KeepAliveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second Close: %v, want net.ErrClosed", err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read after Close: %v, want net.ErrClosed", err)
	}
}

// pair is a dialled Conn and the server's end of it.
func pair(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	l := listen(t, "127.0.0.1:0")
	c, err := Dial(context.Background(), netip.MustParseAddrPort(l.Addr().String()), time.Second, net.KeepAliveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}

// TestCopySplices: Copy moves a stream from a *net.TCPConn to a Conn and
// from a Conn to a *net.TCPConn unchanged, to the source's end, counting
// every byte, through a destination whose small send buffer takes each
// pipeful in many parts; it declines other connections.
func TestCopySplices(t *testing.T) {
	a, aPeer := pair(t)
	b, bPeer := pair(t)
	data := make([]byte, 3<<20+17)
	rand.Read(data)
	for _, c := range []struct {
		name     string
		in       net.Conn // written to
		src, dst net.Conn // Copy's
		out      net.Conn // read from
	}{
		{"TCPConn to Conn", a, aPeer, b, bPeer},
		{"Conn to TCPConn", bPeer, b, aPeer, a},
	} {
		setSockopt(t, c.dst.(syscall.Conn), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
		go func() { c.in.Write(data); c.in.(interface{ CloseWrite() error }).CloseWrite() }()
		got := make(chan []byte, 1)
		go func() { b, _ := io.ReadAll(c.out); got <- b }()
		var counted int64
		ok, err := Copy(c.dst, c.src, func(n int64) { counted += n })
		if !ok || err != nil {
			t.Fatalf("%s: Copy: %v, %v", c.name, ok, err)
		}
		c.dst.(interface{ CloseWrite() error }).CloseWrite()
		if g := <-got; !bytes.Equal(g, data) || counted != int64(len(data)) {
			t.Fatalf("%s: received %d bytes (equal %v), counted %d; want %d", c.name, len(g), bytes.Equal(g, data), counted, len(data))
		}
	}
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	if ok, _ := Copy(p1, a, nil); ok {
		t.Fatal("Copy took a net.Pipe")
	}
}

// TestCopyEndsOnCloseAndDeadline: a Copy waiting for bytes ends with
// net.ErrClosed when its source is closed, and with a timeout at the
// source's read deadline.
func TestCopyEndsOnCloseAndDeadline(t *testing.T) {
	src, _ := pair(t)
	dst, _ := pair(t)
	src.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := Copy(dst, src, nil); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Copy at the read deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	src.SetReadDeadline(time.Time{})
	time.AfterFunc(50*time.Millisecond, func() { src.Close() })
	if _, err := Copy(dst, src, nil); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Copy after Close: %v, want net.ErrClosed", err)
	}
}
