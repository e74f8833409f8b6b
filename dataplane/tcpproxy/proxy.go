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

// dial connects to addr, with TLS when useTLS, and writes the PROXY
// protocol header for c first when the transport asks for one.
func (t *Transport) dial(ctx context.Context, addr string, useTLS bool, c *tcpmux.Conn) (net.Conn, error) {
	d := net.Dialer{Timeout: t.DialTimeout, KeepAlive: t.DialKeepAlive}
	if t.DialTimeout <= 0 {
		d.Timeout = 0
	}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if t.ProxyProtocol > 0 {
		hdr := ProxyHeader(t.ProxyProtocol, c.Client, c.LocalAddr())
		if _, err := raw.Write(hdr); err != nil {
			_ = raw.Close()
			return nil, err
		}
	}
	if !useTLS {
		return raw, nil
	}
	cfg := t.TLS
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		host, _, _ := net.SplitHostPort(addr)
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
		return nil, err
	}
	return tc, nil
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
// (Traefik pkg/tcp/proxy.go). Between two *net.TCPConn the copy splices.
// With c.Stats set, the bytes forwarded each way are added to the
// router's counters every copyChunk bytes and when the direction ends.
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
	client := c.Conn
	errc := make(chan error, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		if c.DropProxyHeader {
			if err := dropProxyHeader(s, client, in); err != nil {
				_ = client.Close()
				_ = s.Close()
				errc <- err
				return
			}
		}
		errc <- copyHalf(s, client, in)
	})
	wg.Go(func() { errc <- copyHalf(client, s, out) })
	err := <-errc
	if err != nil && !errors.Is(err, net.ErrClosed) && log != nil && log.Enabled(context.Background(), slog.LevelDebug) {
		log.Debug("tcp forwarding ended", "error", err)
	}
	if terminationDelay >= 0 {
		dl := time.Now().Add(terminationDelay)
		_ = client.SetReadDeadline(dl)
		_ = s.SetReadDeadline(dl)
	}
	wg.Wait()
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

// copyChunk is how many bytes a direction copies between two additions
// to the router's byte counter: large enough that the kernel's splice
// (io.CopyN between TCP sockets still splices) runs as with io.Copy, small
// enough that a bulk transfer shows progress; a direction that ends adds
// the rest at once.
const copyChunk = 256 << 10

// copyHalf copies src to dst, adding the bytes copied to n (when not nil),
// and then closes dst's write side (or dst entirely when it cannot
// half-close).
func copyHalf(dst, src net.Conn, n *atomic.Uint64) error {
	var err error
	if n == nil {
		_, err = io.Copy(dst, src)
	} else {
		for {
			var w int64
			w, err = io.CopyN(dst, src, copyChunk)
			n.Add(uint64(w))
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				break
			}
		}
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		_ = dst.Close()
	}
	return err
}
