package upstream

import (
	"context"
	"crypto/tls"
	"errors"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"

	"github.com/gantry-proxy/gantry/dataplane/coalesce"
)

// Options configures a Client. Zero values take the defaults given.
type Options struct {
	DialTimeout time.Duration // default 30s
	// ResponseHeaderTimeout bounds the wait for the response head, from
	// the end of the request head until the final response's head is read
	// (1xx responses included). 0 means none; Gantry passes a finite one.
	// On expiry the error is a timeout (Result.Err is a net.Error with
	// Timeout() true), whether the backend sent nothing or part of a head.
	ResponseHeaderTimeout time.Duration
	// BodyReadTimeout bounds the wait for the next bytes of a response
	// body (HTTP/1.1 servers) once its head was relayed: every read that
	// returns bytes re-arms it, so a stream that keeps sending is never
	// cut. On expiry Forward returns a timeout error with Result.Sent set
	// (the caller aborts the client's response). 0 means none.
	BodyReadTimeout time.Duration
	// ExpectContinueTimeout is how long a request carrying
	// "Expect: 100-continue" waits for the backend's 100 before its body is
	// sent anyway (net/http's Transport.ExpectContinueTimeout). Default 1s.
	ExpectContinueTimeout time.Duration
	// IdleConnTimeout: idle connections older than this are not reused.
	// Default 90s.
	IdleConnTimeout time.Duration
	// MaxIdleConnsPerHost is the idle pool size per backend address.
	// Default 200; negative disables keep-alive (each request sends
	// "Connection: close").
	MaxIdleConnsPerHost int
	// MaxResponseHeaderBytes limits a response head (status line and
	// fields, each 1xx head counted on its own). Default 64 KiB; a longer
	// head is a protocol error (502).
	MaxResponseHeaderBytes int
	// TLS is the client configuration for https backends (nil: defaults).
	// Its NextProtos are set by the Client.
	TLS *tls.Config
	// DisableHTTP2 offers only http/1.1 to https backends.
	DisableHTTP2 bool
	// HTTP2 tunes the x/net/http2 transport (h2c and https-h2 backends):
	// ReadIdleTimeout sends a PING after that long without a frame and
	// PingTimeout closes the connection when it is not answered.
	ReadIdleTimeout, PingTimeout time.Duration
}

// Client is Gantry's upstream client for one serversTransport: a pool of
// HTTP/1.1 connections per backend address, and an x/net/http2 transport
// for h2c:// backends and https backends that negotiate h2. Safe for
// concurrent use. Build one with New; Close releases idle connections.
type Client struct {
	o      Options
	dialer net.Dialer
	tls    *tls.Config // https: h2 and http/1.1 offered (unless DisableHTTP2)
	tls1   *tls.Config // https, Upgrade requests: http/1.1 only
	h2c    *http2.Transport
	h2     *http2.Transport // for ClientConns over TLS we dialed ourselves

	mu     sync.Mutex
	hosts  map[string]*Host
	reaper *time.Timer // closes idle connections past IdleConnTimeout; nil until the first Host
	closed bool
}

// New returns a Client with options o.
func New(o Options) *Client {
	if o.DialTimeout <= 0 {
		o.DialTimeout = 30 * time.Second
	}
	if o.IdleConnTimeout <= 0 {
		o.IdleConnTimeout = 90 * time.Second
	}
	if o.ExpectContinueTimeout <= 0 {
		o.ExpectContinueTimeout = time.Second
	}
	if o.MaxIdleConnsPerHost == 0 {
		o.MaxIdleConnsPerHost = 200
	}
	if o.MaxResponseHeaderBytes <= 0 {
		o.MaxResponseHeaderBytes = 64 << 10
	}
	c := &Client{o: o, dialer: net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second}, hosts: map[string]*Host{}}
	base := o.TLS
	if base == nil {
		base = &tls.Config{}
	}
	c.tls = base.Clone()
	c.tls.NextProtos = []string{"h2", "http/1.1"}
	if o.DisableHTTP2 {
		c.tls.NextProtos = []string{"http/1.1"}
	}
	c.tls1 = base.Clone()
	c.tls1.NextProtos = []string{"http/1.1"}
	c.h2c = &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			conn, err := c.dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// The h2c transport flushes a request's HEADERS, DATA and
			// end of stream one by one: through a coalesce.Conn the
			// calls in flight on the connection share write(2)s. Its
			// writer goroutine belongs to the connection, as the
			// transport's own read loop does: it ends when the
			// transport closes the connection (idle, failed, or
			// CloseIdleConnections).
			cc := coalesce.NewConn(conn)
			go cc.Run()
			return cc, nil
		},
		ReadIdleTimeout: o.ReadIdleTimeout,
		PingTimeout:     o.PingTimeout,
		IdleConnTimeout: o.IdleConnTimeout,
	}
	c.h2 = &http2.Transport{ReadIdleTimeout: o.ReadIdleTimeout, PingTimeout: o.PingTimeout, IdleConnTimeout: o.IdleConnTimeout}
	return c
}

// Host returns the connection pool of one backend, scheme "http", "https"
// or "h2c", addr "host:port". The same Host is returned for the same pair
// for the Client's life, so a Host may be resolved once when a
// configuration is built and used per request without a lookup.
func (c *Client) Host(scheme, addr string) *Host {
	key := scheme + "://" + addr
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[key]
	if h == nil {
		h = &Host{c: c, scheme: scheme, addr: addr, idle: make(chan *pconn, max(c.o.MaxIdleConnsPerHost, 0))}
		h.tls, h.tls1 = c.tls, c.tls1
		if c.tls.ServerName == "" {
			name, _, _ := net.SplitHostPort(addr)
			h.tls, h.tls1 = c.tls.Clone(), c.tls1.Clone()
			h.tls.ServerName, h.tls1.ServerName = name, name
		}
		c.hosts[key] = h
		if c.reaper == nil && !c.closed {
			c.reaper = time.AfterFunc(c.reapEvery(), c.reap)
		}
	}
	return h
}

func (c *Client) reapEvery() time.Duration { return max(c.o.IdleConnTimeout/2, time.Second) }

// reap runs on a timer: it closes idle connections older than
// IdleConnTimeout (a backend that left keeps none open) and forgets Hosts
// that served nothing since the last round and hold no connection (a
// target still holding one keeps working: Host is created again on demand).
func (c *Client) reap() {
	hs := c.hostList()
	now := time.Now()
	for _, h := range hs {
		kept := 0
		for range len(h.idle) {
			select {
			case pc := <-h.idle:
				if now.Sub(pc.idleAt) > h.c.o.IdleConnTimeout {
					pc.c.Close()
					continue
				}
				select {
				case h.idle <- pc:
					kept++
				default:
					pc.c.Close()
				}
			default:
			}
		}
		uses := h.uses.Load()
		if kept == 0 && uses == h.seen && h.h2cc.Load() == nil {
			c.mu.Lock()
			if c.hosts[h.scheme+"://"+h.addr] == h {
				delete(c.hosts, h.scheme+"://"+h.addr)
			}
			c.mu.Unlock()
		}
		h.seen = uses
	}
	c.mu.Lock()
	if !c.closed {
		c.reaper.Reset(c.reapEvery())
	}
	c.mu.Unlock()
}

// hostList returns the Hosts known now, for work done without c.mu.
func (c *Client) hostList() []*Host {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Collect(maps.Values(c.hosts))
}

// Close closes every idle connection and stops the idle reaper. Requests
// still running finish normally.
func (c *Client) Close() {
	c.mu.Lock()
	c.closed = true
	if c.reaper != nil {
		c.reaper.Stop()
	}
	c.mu.Unlock()
	c.CloseIdleConnections()
}

// CloseIdleConnections closes every idle connection of every backend.
func (c *Client) CloseIdleConnections() {
	for _, h := range c.hostList() {
		h.closeIdle()
	}
	c.h2c.CloseIdleConnections()
	c.h2.CloseIdleConnections()
}

// Host is one backend address's pool: idle HTTP/1.1 connections in a
// buffered channel (taking and returning one takes no lock), and for https
// backends that negotiated h2, the current HTTP/2 connection.
type Host struct {
	c         *Client
	scheme    string
	addr      string
	tls, tls1 *tls.Config // with ServerName set
	idle      chan *pconn
	uses      atomic.Int64 // Forward calls, for the reaper
	seen      int64        // uses at the reaper's last round (reaper only)

	h2mu sync.Mutex
	h2cc atomic.Pointer[http2.ClientConn] // https backend speaking h2; nil until learned
}

func (h *Host) closeIdle() {
	for {
		select {
		case pc := <-h.idle:
			pc.c.Close()
		default:
			// Never wait for the HTTP/2 connection's streams (a gRPC
			// stream may last hours): no new request takes it, and it is
			// closed now if idle, else by its idle timeout.
			if cc := h.h2cc.Swap(nil); cc != nil {
				cc.SetDoNotReuse()
				if st := cc.State(); st.StreamsActive == 0 && st.StreamsReserved == 0 && st.StreamsPending == 0 {
					_ = cc.Close()
				}
			}
			return
		}
	}
}

// get returns an idle connection that is still open and silent, or nil;
// now is the current time.
//
// Every idle connection is checked before reuse with one non-blocking
// peek (a syscall, alive): one the server closed or reset is dropped, and
// so is one holding bytes nobody asked for — whatever a backend wrote on
// an idle connection before a request was written there can never be
// taken for that request's response (a stray or forged response would
// otherwise answer the next client). The check is not skipped for any
// request or idle time: a backend may write those bytes at any moment
// after its response (issue 26: 50 ms later, the next request 300 ms
// later). What it cannot see is a close that races the request's write;
// a replayable request that then fails before any response byte is sent
// again once on a new connection (Forward).
func (h *Host) get(now time.Time) *pconn {
	for {
		select {
		case pc := <-h.idle:
			if now.Sub(pc.idleAt) > h.c.o.IdleConnTimeout || pc.r != pc.w || !alive(pc) {
				pc.c.Close()
				continue
			}
			pc.reused = true
			return pc
		default:
			return nil
		}
	}
}

// put returns pc to the idle pool, or closes it when the pool is full or
// keep-alive is off; now is the current time.
func (h *Host) put(pc *pconn, now time.Time) {
	if pc.r != pc.w || h.c.o.MaxIdleConnsPerHost < 0 {
		pc.c.Close() // bytes beyond the response: the framing cannot be trusted
		return
	}
	pc.r, pc.w = 0, 0
	pc.idleAt = now
	select {
	case h.idle <- pc:
	default:
		pc.c.Close()
	}
}

// errDial marks a failure to connect: nothing reached the server.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// IsDialError reports whether err is a failure to connect (TCP or TLS):
// nothing was sent to the server, so another server may take the request.
func IsDialError(err error) bool {
	_, ok := errors.AsType[*dialError](err)
	return ok
}

// dial opens a connection. For https it negotiates ALPN; when the backend
// picks h2 (and upgrade is false) the connection becomes h's HTTP/2
// connection and dial returns (nil, cc).
func (h *Host) dial(ctx context.Context, upgrade bool) (*pconn, *http2.ClientConn, error) {
	c, err := h.c.dialer.DialContext(ctx, "tcp", h.addr)
	if err != nil {
		return nil, nil, &dialError{err}
	}
	if h.scheme == "https" {
		cfg := h.tls
		if upgrade {
			cfg = h.tls1
		}
		tc := tls.Client(c, cfg)
		hctx, cancel := context.WithTimeout(ctx, h.c.o.DialTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			c.Close()
			return nil, nil, &dialError{err}
		}
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			// Above TLS, so the frames gathered also share TLS records
			// (see the h2c transport's DialTLSContext in New); the
			// writer ends when the transport closes the connection.
			wc := tlsCoalesced{coalesce.NewConn(tc), tc}
			go wc.Run()
			cc, err := h.c.h2.NewClientConn(wc)
			if err != nil {
				wc.Close()
				return nil, nil, &dialError{err}
			}
			return nil, cc, nil
		}
		pc := newPconn(tc)
		// The liveness peek looks at the TCP socket under TLS: any record
		// waiting there on an idle connection (close_notify, a late
		// ticket) drops it, which is safe.
		pc.setRaw(c)
		return pc, nil, nil
	}
	return newPconn(c), nil, nil
}

// tlsCoalesced is a TLS connection that negotiated h2, written through a
// coalesce.Conn; it keeps the connection's TLS state visible to
// x/net/http2 (Response.TLS).
type tlsCoalesced struct {
	*coalesce.Conn
	tc *tls.Conn
}

func (c tlsCoalesced) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }

// Proto reports how requests to h travel: "h2" for h2c backends and https
// backends known to speak h2, else "http/1.1".
func (h *Host) Proto() string {
	if h.scheme == "h2c" || h.h2cc.Load() != nil {
		return "h2"
	}
	return "http/1.1"
}
