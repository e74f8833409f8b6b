package tcpproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// Transport is a resolved serversTransport.
type Transport struct {
	DialTimeout   time.Duration // default 30s
	DialKeepAlive time.Duration // default 15s; negative disables
	// TerminationDelay bounds how long the other direction may go on once
	// one peer closed its write side (default 100ms; negative: no bound).
	TerminationDelay time.Duration
	ProxyProtocol    int         // 0 (off), 1 or 2
	TLS              *tls.Config // used for servers with tls: true; nil means a default client config
}

// Defaults of a TCP serversTransport (Traefik TCPServersTransport.SetDefaults).
const (
	DefaultDialTimeout      = 30 * time.Second
	DefaultDialKeepAlive    = 15 * time.Second
	DefaultTerminationDelay = 100 * time.Millisecond
)

// DefaultTransport returns Traefik's defaults.
func DefaultTransport() *Transport {
	return &Transport{DialTimeout: DefaultDialTimeout, DialKeepAlive: DefaultDialKeepAlive, TerminationDelay: DefaultTerminationDelay}
}

// dial connects to server s, with TLS when s asks for it, and writes the
// PROXY protocol header for c first when the transport asks for one. raw is
// the TCP socket under conn (conn itself without TLS), for armKeepAlive:
// the keep-alive options are not set here but once the connection has
// lived keepAliveDelay (see armKeepAlive), unless dialKeepAlive is that
// short. The socket comes from dialSocket: a raw one for an IP address.
func (t *Transport) dial(ctx context.Context, s *Server, c *tcpmux.Conn) (conn net.Conn, raw socket, err error) {
	var ka net.KeepAliveConfig
	if k := keepAlive(t.DialKeepAlive); k.Enable && k.Idle <= keepAliveDelay {
		ka = k
	}
	raw, err = dialSocket(ctx, s.Address, max(t.DialTimeout, 0), ka)
	if err != nil {
		return nil, nil, err
	}
	if t.ProxyProtocol > 0 {
		hdr := ProxyHeader(t.ProxyProtocol, c.Client, c.LocalAddr())
		if _, err := raw.Write(hdr); err != nil {
			_ = raw.Close()
			return nil, nil, err
		}
	}
	if !s.TLS {
		return raw, raw, nil
	}
	cfg := t.TLS
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		host, _, _ := net.SplitHostPort(s.Address)
		cfg.ServerName = host
	}
	tc := tls.Client(raw, cfg)
	hs := t.DialTimeout
	if hs <= 0 {
		hs = DefaultDialTimeout
	}
	hctx, cancel := context.WithTimeout(ctx, hs)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		_ = raw.Close()
		return nil, nil, err
	}
	return tc, raw, nil
}

// socket is a dialled TCP socket: a *net.TCPConn or a *rawtcp.Conn.
type socket interface {
	net.Conn
	syscall.Conn
	SetKeepAliveConfig(net.KeepAliveConfig) error
}

// dialNet connects to address (a host name is resolved) with net.Dialer:
// TCP_NODELAY, and keepAlive when enabled (Dialer.DialTCP with an address
// parsed once would skip the parsing per dial, but it binds the socket to
// the zero local address first: one syscall more per connection,
// measured).
func dialNet(ctx context.Context, address string, timeout time.Duration, ka net.KeepAliveConfig) (socket, error) {
	d := net.Dialer{Timeout: timeout, KeepAlive: -1}
	if ka.Enable {
		d.KeepAliveConfig = ka
	}
	nc, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, err
	}
	return nc.(*net.TCPConn), nil
}

// keepAlive is the backend socket's keep-alive for dialKeepAlive d:
// probes after d idle and every d after that, as Go's Dialer sets for
// KeepAlive d, but the probe count left at the system's default (Linux
// net.ipv4.tcp_keepalive_probes, 9, which is Go's default too): one
// setsockopt less per connection. d < 0 disables keep-alive (Traefik
// dialKeepAlive); d == 0 is Traefik's and Go's default, 15s.
func keepAlive(d time.Duration) net.KeepAliveConfig {
	if d < 0 {
		return net.KeepAliveConfig{Enable: false}
	}
	if d == 0 {
		d = DefaultDialKeepAlive
	}
	return net.KeepAliveConfig{Enable: true, Idle: d, Interval: d, Count: -1}
}

// keepAliveDelay is how long a dialled connection lives before its
// keep-alive options are set (armKeepAlive), when dialKeepAlive is longer.
// A connection that ends sooner never idles for dialKeepAlive, so no probe
// would have been sent: it skips the three setsockopt calls (SO_KEEPALIVE,
// TCP_KEEPIDLE, TCP_KEEPINTVL) and the kernel's keep-alive timer. The
// kernel counts the first idle period from when the options are set, so a
// connection idle from its start sends its first probe at most this much
// later than dialKeepAlive after the connect; later periods are unchanged.
const keepAliveDelay = time.Second

// keepAliveArm sets a dialled socket's keep-alive options keepAliveDelay
// after armKeepAlive, unless stop comes first.
type keepAliveArm struct {
	raw   socket
	cfg   net.KeepAliveConfig
	timer *time.Timer
	wg    sync.WaitGroup // the timer's function, while it runs
}

// armKeepAlive schedules dialKeepAlive's options on raw, the socket dial
// returned, keepAliveDelay from now; nil when dial set them already (a
// dialKeepAlive of keepAliveDelay or less) or keep-alive is disabled. The
// caller calls stop when the connection ended.
func (t *Transport) armKeepAlive(raw socket) *keepAliveArm {
	cfg := keepAlive(t.DialKeepAlive)
	if !cfg.Enable || cfg.Idle <= keepAliveDelay {
		return nil
	}
	a := &keepAliveArm{raw: raw, cfg: cfg}
	a.wg.Add(1)
	a.timer = time.AfterFunc(keepAliveDelay, a.set)
	return a
}

// set is the timer's function. An error (the connection closed meanwhile)
// is ignored, as Go's Dialer ignores its own keep-alive errors.
func (a *keepAliveArm) set() {
	defer a.wg.Done()
	_ = a.raw.SetKeepAliveConfig(a.cfg)
}

// stop cancels the setting if it has not started, else waits for it to
// end. Safe on nil.
func (a *keepAliveArm) stop() {
	if a == nil {
		return
	}
	if a.timer.Stop() {
		a.wg.Done()
	}
	a.wg.Wait()
}

// postgresSSLRequest is the Postgres SSLRequest message: int32 length 8,
// int32 code 80877103 (Postgres protocol, "SSL Session Encryption").
var postgresSSLRequest = []byte{0, 0, 0, 8, 4, 210, 22, 47}

// errPostgresRefused: the server answered the replayed SSLRequest with
// something other than 'S'.
var errPostgresRefused = errors.New("postgres server refused TLS")

// Forward copies bytes between the client c and the server s until both
// directions end, then closes both. It sends c.Peeked first. When one
// direction ends, the write side of its destination is closed (half-close
// propagated) and the other direction gets terminationDelay to finish
// (Traefik pkg/tcp/proxy.go). Each direction reads into a small buffer
// first and splices (between two TCP sockets) once a read fills it
// (copyHalf). With c.Stats set, the bytes forwarded each way are added to
// the router's counters as they are written (every pipeful while
// splicing, every copyChunk bytes through io.Copy) and when the direction
// ends. The server-to-client direction
// runs on the caller's goroutine.
func Forward(c *tcpmux.Conn, s net.Conn, terminationDelay time.Duration, log *slog.Logger) {
	defer c.Close()
	defer s.Close()
	var in, out *atomic.Uint64
	if c.Stats != nil {
		in, out = c.Stats.BytesIn(), c.Stats.BytesOut()
	}
	if len(c.Peeked) > 0 {
		if _, err := s.Write(c.Peeked); err != nil {
			return
		}
		if in != nil {
			in.Add(uint64(len(c.Peeked)))
		}
		c.Peeked = nil
	}
	f := &forwarding{client: c.Conn, delay: terminationDelay, log: log, cut: c.Cut}
	f.open.Store(2)
	f.wg.Go(func() {
		if c.DropProxyHeader {
			if err := dropProxyHeader(s, f.client, in); err != nil {
				_ = f.client.Close()
				_ = s.Close()
				f.open.Add(-1)
				f.ended(err, s)
				return
			}
		}
		f.ended(copyHalf(s, f.client, in, &f.open), s)
	})
	f.ended(copyHalf(f.client, s, out, &f.open), f.client)
	f.wg.Wait()
	if f.copied != nil {
		close(f.copied)
		f.cutWait.Wait()
	}
}

// forwarding is one Forward's state, in one allocation.
type forwarding struct {
	client net.Conn
	delay  time.Duration
	log    *slog.Logger
	first  sync.Once
	open   atomic.Int32 // directions still copying
	wg     sync.WaitGroup
	// cut is tcpmux.Conn.Cut. With a negative delay, the direction left
	// after the first ended waits for it on a goroutine (cutWait) until
	// copied is closed, when both directions ended.
	cut     <-chan struct{}
	copied  chan struct{}
	cutWait sync.WaitGroup
}

// ended is called when a direction ends, with other the connection the
// other direction reads: the first to end logs its error and gives the
// other direction terminationDelay to finish, as a read deadline on other
// (the ended direction's own source is read no more, so it gets none, and
// neither does other when the other direction has ended too: one timer
// per connection, or none). A direction ended by its source being closed
// under it (net.ErrClosed: the entrypoint's shutdown after its grace
// period, or the watcher of a removed router) ends the other one at once,
// also when terminationDelay is negative (no bound): else a silent server
// would hold the connection, and the shutdown waiting for it, forever.
// With a negative terminationDelay after a normal end (a half-close), the
// other direction is ended when the entrypoint's shutdown cuts (f.cut).
func (f *forwarding) ended(err error, other net.Conn) {
	f.first.Do(func() {
		closed := errors.Is(err, net.ErrClosed)
		if err != nil && !closed && f.log != nil && f.log.Enabled(context.Background(), slog.LevelDebug) {
			f.log.Debug("tcp forwarding ended", "error", err)
		}
		switch {
		case f.open.Load() == 0:
		case closed:
			_ = other.SetReadDeadline(time.Now())
		case f.delay >= 0:
			_ = other.SetReadDeadline(time.Now().Add(f.delay))
		case f.cut != nil:
			f.copied = make(chan struct{})
			f.cutWait.Go(func() {
				select {
				case <-f.cut:
					_ = other.SetReadDeadline(time.Now())
				case <-f.copied:
				}
			})
		}
	})
}

// dropProxyHeader reads a PROXY protocol header the client's first bytes
// start with and drops it, then writes the other bytes it read to s
// (adding them to in). Without a header nothing is dropped; a malformed
// one is an error (go-proxyproto's read error, which ends the connection).
func dropProxyHeader(s, client net.Conn, in *atomic.Uint64) error {
	br := bufio.NewReaderSize(client, 1024)
	_, _, err := ReadProxyHeader(br)
	if err != nil && !errors.Is(err, ErrNoProxyHeader) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("untrusted peer's PROXY protocol header: %w", err)
	}
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := s.Write(b); err != nil {
			return err
		}
		if in != nil {
			in.Add(uint64(n))
		}
	}
	return nil
}

// copyChunk is how many bytes a direction that cannot splice (TLS on one
// side, or outside Linux) copies between two additions to the router's
// byte counter: large enough that io.CopyN costs as io.Copy does, small
// enough that a bulk transfer shows progress; a direction that ends adds
// the rest at once.
const copyChunk = 256 << 10

// smallCopy is the size of the buffer a direction reads into before it
// splices, and smallReads the number of reads it does so at most: splice
// costs two calls and a pipe per chunk, more than read+write for the
// short messages of a request/response protocol or a short connection,
// while a read that fills the buffer shows a bulk transfer, which the
// kernel then moves without copying to user space. After smallReads
// reads a long-lived connection splices too, so an idle one does not hold
// a buffer.
const (
	smallCopy  = 4 << 10
	smallReads = 8
)

var smallBufs = sync.Pool{New: func() any { return new([smallCopy]byte) }}

// copyHalf copies src to dst, adding the bytes copied to n (when not nil),
// and then closes dst's write side (or dst entirely when it cannot
// half-close), unless it is the last of the open directions to end:
// Forward closes both connections then, which sends the FIN, so the
// shutdown call would be one syscall per connection for nothing. It
// reads into a pooled smallCopy buffer up to smallReads times, then (or
// as soon as a read fills the buffer) hands over to copyRest.
func copyHalf(dst, src net.Conn, n *atomic.Uint64, open *atomic.Int32) error {
	done, err := copySmall(dst, src, n)
	if !done {
		err = copyRest(dst, src, n)
	}
	if open.Add(-1) == 0 {
		return err
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		_ = dst.Close()
	}
	return err
}

// copySmall is copyHalf's read/write phase; done reports that src ended
// (err nil on EOF) or that a read or write failed.
func copySmall(dst, src net.Conn, n *atomic.Uint64) (done bool, err error) {
	buf := smallBufs.Get().(*[smallCopy]byte)
	defer smallBufs.Put(buf)
	for range smallReads {
		r, rerr := src.Read(buf[:])
		if r > 0 {
			w, werr := dst.Write(buf[:r])
			if n != nil {
				n.Add(uint64(w))
			}
			if werr != nil {
				return true, werr
			}
		}
		if rerr != nil {
			if rerr == io.EOF {
				rerr = nil
			}
			return true, rerr
		}
		if r == len(buf) {
			return false, nil
		}
	}
	return false, nil
}

// copyRest is copyHalf's splicing phase: spliceCopy between two TCP
// sockets, else io.Copy.
func copyRest(dst, src net.Conn, n *atomic.Uint64) error {
	var counted func(int64)
	if n != nil {
		counted = func(w int64) { n.Add(uint64(w)) }
	}
	if ok, err := spliceCopy(dst, src, counted); ok {
		return err
	}
	if n == nil {
		_, err := io.Copy(dst, src)
		return err
	}
	for {
		w, err := io.CopyN(dst, src, copyChunk)
		n.Add(uint64(w))
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return err
		}
	}
}
