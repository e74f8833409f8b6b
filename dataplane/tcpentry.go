package dataplane

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/tcpproxy"
	"github.com/gantry-proxy/gantry/internal/replayconn"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// maxHelloRecord bounds the bytes peeked for routing a TLS ClientHello:
// a 5-byte header plus the largest plaintext record (RFC 8446 §5.1, 2^14
// bytes); a hello split over several records must fit in it too.
const maxHelloRecord = 5 + 1<<14

// postgresSSLRequest is int32(8) + int32(80877103), the message a Postgres
// client sends to ask for TLS (Postgres protocol §53.2.10; Traefik
// pkg/server/router/tcp/postgres.go).
var postgresSSLRequest = []byte{0, 0, 0, 8, 4, 210, 22, 47}

// divert offers an accepted connection to the entrypoint's PROXY protocol
// policy and TCP routers before HTTP sees it (the one hook in sniff). It
// returns true when it took c (served it, or closed it); false hands c back
// to HTTP, with the bytes it read left in c.Pending (and c counted as
// sniffed) so that the HTTP servers read them first. With neither TCP
// routers nor proxyProtocol on the entrypoint it reads nothing.
//
// Waiting for the client's first bytes is bounded by the entrypoint's
// readHeaderTimeout (Gantry's default 10s; Traefik bounds it by
// readTimeout, 60s). When only non-TLS TCP routers exist on the
// entrypoint, a matching route is chosen before the client sends anything,
// so server-first protocols (SMTP, MySQL) are not stalled (Traefik
// router.go ServeTCP, first block).
func (e *entryPoint) divert(c *trackedConn) bool {
	t := e.active.Load()
	tep := t.TCP(e.name)
	if tep.Empty() && e.proxyIn == nil {
		return false
	}
	raw, ok := c.Conn.Conn.(*net.TCPConn)
	if !ok {
		return false
	}
	client := raw.RemoteAddr().(*net.TCPAddr).AddrPort()
	client = netip.AddrPortFrom(client.Addr().Unmap(), client.Port())
	// A table of HostSNI(`*`) routes only, with no PROXY protocol to read,
	// is routed before anything is read: no deadline, no peek buffer (the
	// path of every connection on a plain layer-4 entrypoint).
	if e.proxyIn == nil {
		if r := tep.ServeFirst(&tcpmux.ConnData{ClientIP: client.Addr()}); r != nil {
			e.serveTCP(t, c, raw, r, nil, client, false, false)
			return true
		}
	}
	_ = raw.SetReadDeadline(time.Now().Add(e.readHeaderTimeout))
	br := bufio.NewReaderSize(raw, maxHelloRecord)
	dropLater := false
	if e.proxyIn != nil {
		if client, dropLater, ok = e.readProxyHeader(c, raw, br, tep, client); !ok {
			return e.refuse(c)
		}
	}
	if tep.Empty() {
		return e.giveBack(c, raw, br)
	}
	return e.routeTCP(t, tep, c, raw, br, client, dropLater)
}

// readProxyHeader applies the entrypoint's PROXY protocol policy to the
// connection's first bytes (br reads raw). A trusted peer's v1 or v2
// header gives the client address (then c's RemoteAddr is that client);
// an untrusted peer's header is read and dropped, its address unused:
// Traefik v3 runs go-proxyproto (v0.12) with USE for trusted peers and
// IGNORE for others (pkg/server/server_entrypoint_tcp.go
// buildProxyProtocolListener), and IGNORE parses the header and discards
// it. So a client cannot slip a header of its own to a server that trusts
// Gantry's. ok is false for a malformed header, refused in both cases, as
// go-proxyproto's read error closes the connection.
//
// Where connections are routed before the client sends anything
// (server-first protocols, see divert), an untrusted peer's header is not
// awaited here: dropLater asks the byte copy to drop it when the client's
// first bytes come (tcpmux.Conn.DropProxyHeader), as go-proxyproto reads
// it at the connection's first Read.
func (e *entryPoint) readProxyHeader(c *trackedConn, raw *net.TCPConn, br *bufio.Reader, tep *tcpmux.EntryPoint, client netip.AddrPort) (_ netip.AddrPort, dropLater, ok bool) {
	trusted := e.proxyIn.trusts(raw.RemoteAddr())
	src, found, err := netip.AddrPort{}, false, tcpproxy.ErrNoProxyHeader
	if !trusted && !tep.Empty() && tep.ServeFirst(&tcpmux.ConnData{ClientIP: client.Addr()}) != nil {
		dropLater = true
	} else {
		src, found, err = tcpproxy.ReadProxyHeader(br)
	}
	switch {
	case errors.Is(err, tcpproxy.ErrNoProxyHeader):
	case err != nil:
		e.log.Debug("proxy protocol header refused", "peer", raw.RemoteAddr().String(), "trusted", trusted, "error", err)
		return client, false, false
	case found && trusted:
		client = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
		c.Conn.Conn = &proxiedConn{TCPConn: raw, remote: net.TCPAddrFromAddrPort(client)}
	case !trusted:
		e.log.Debug("proxy protocol header of an untrusted peer dropped", "peer", raw.RemoteAddr().String())
	}
	return client, dropLater, true
}

// routeTCP routes a connection of an entrypoint with TCP routers (tep) by
// what its first bytes (br reads raw) show: a server-first route when the
// client sent nothing yet, a PostgreSQL SSLRequest, a TLS ClientHello's
// SNI and ALPN, or the plain routes. It returns true when it took c
// (divert), false when HTTP gets it.
func (e *entryPoint) routeTCP(t *router.Table, tep *tcpmux.EntryPoint, c *trackedConn, raw *net.TCPConn, br *bufio.Reader, client netip.AddrPort, dropLater bool) bool {
	cd := tcpmux.ConnData{ClientIP: client.Addr()}
	if br.Buffered() == 0 {
		if r := tep.ServeFirst(&cd); r != nil {
			_ = raw.SetReadDeadline(time.Time{})
			e.serveTCP(t, c, raw, r, nil, client, false, dropLater)
			return true
		}
	}
	postgres, err := peekPostgres(br)
	if err != nil {
		return e.refuse(c)
	}
	if postgres && tep.TLS.Len() > 0 {
		return e.servePostgres(t, tep, c, raw, br, client)
	}
	isTLS, err := peekHello(br, &cd)
	if err != nil {
		return e.refuse(c)
	}
	cd.ACMEChallenge = e.answersTLSALPN(&cd)
	switch d, r := tep.Route(&cd, isTLS); d {
	case tcpmux.ToTCP:
		_ = raw.SetReadDeadline(time.Time{})
		peeked, _ := br.Peek(br.Buffered())
		e.serveTCP(t, c, raw, r, bytes.Clone(peeked), client, false, false)
		return true
	default:
		return e.giveBack(c, raw, br)
	}
}

// giveBack hands c back to HTTP (divert's false): the read deadline is
// cleared, and the bytes br read from raw are kept in c.Pending, c counted
// as sniffed, so that the HTTP servers read them first.
func (e *entryPoint) giveBack(c *trackedConn, raw *net.TCPConn, br *bufio.Reader) bool {
	_ = raw.SetReadDeadline(time.Time{})
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		c.Pending = bytes.Clone(b)
		c.sniffed.Store(true)
		e.sniffers.Add(-1)
	}
	return false
}

// refuse closes c, counted as sniffed (divert's true: the connection was
// taken).
func (e *entryPoint) refuse(c *trackedConn) bool {
	e.sniffers.Add(-1)
	c.sniffed.Store(true)
	_ = c.Close()
	return true
}

// answersTLSALPN reports whether Gantry answers the hello in cd itself: it
// offers acme-tls/1, a TLS-ALPN-01 challenge of Gantry's is pending for
// its SNI, and the entrypoint does not set allowACMEByPass. Every other
// acme-tls/1 hello is routed like any other connection, so an ACME client
// behind a passthrough router validates through it (Traefik passes them
// through only when no resolver uses tlsChallenge, or with
// allowACMEByPass; answering only what Gantry is validating covers both
// and lets both proxies renew, case 052).
func (e *entryPoint) answersTLSALPN(cd *tcpmux.ConnData) bool {
	if e.acmeBypass || e.challenges == nil || !slices.Contains(cd.ALPN, "acme-tls/1") {
		return false
	}
	return e.challenges.TLSALPN01(cd.ServerName) != nil
}

// servePostgres answers a Postgres SSLRequest with 'S' and routes the TLS
// ClientHello that follows among the TLS routes only (Traefik
// servePostgres): passthrough replays the SSLRequest to the server,
// termination hands the decrypted stream over.
func (e *entryPoint) servePostgres(t *router.Table, tep *tcpmux.EntryPoint, c *trackedConn, raw *net.TCPConn, br *bufio.Reader, client netip.AddrPort) bool {
	e.sniffers.Add(-1)
	c.sniffed.Store(true)
	if _, err := raw.Write([]byte{'S'}); err != nil {
		_ = c.Close()
		return true
	}
	_, _ = br.Discard(len(postgresSSLRequest))
	cd := tcpmux.ConnData{ClientIP: client.Addr()}
	isTLS, err := peekHello(br, &cd)
	r := tep.TLS.Match(&cd)
	if err != nil || !isTLS || r == nil {
		_ = c.Close()
		return true
	}
	_ = raw.SetReadDeadline(time.Time{})
	peeked, _ := br.Peek(br.Buffered())
	e.sniffers.Add(1) // serveTCP ends the sniffing count
	e.serveTCP(t, c, raw, r, bytes.Clone(peeked), client, !r.Terminate, false)
	return true
}

// tlsTerminator is the handler of a TCP route that terminates TLS under
// tls.options of its own (the generation's, for the router's options):
// serveTCP runs the handshake with TLSConfig, else with the table's
// certificates and Go's defaults from TLS 1.2.
type tlsTerminator interface {
	TLSConfig() *tls.Config
}

// serveTCP serves c with route r: TLS termination when the route asks for
// it, then r's handler, counted in flight (so shutdown waits for it within
// the grace period). While it runs, it is registered with the
// entrypoint's watcher (watchTCP), which closes it once the router has been
// gone from the live table for the grace period.
// dropProxy asks the byte copy to drop an untrusted peer's PROXY header
// (tcpmux.Conn.DropProxyHeader).
func (e *entryPoint) serveTCP(t *router.Table, c *trackedConn, raw *net.TCPConn, r *tcpmux.Route, peeked []byte, client netip.AddrPort, postgres, dropProxy bool) {
	e.sniffers.Add(-1)
	c.sniffed.Store(true)
	conn := &tcpmux.Conn{Conn: raw, Peeked: peeked, Client: client, Postgres: postgres, DropProxyHeader: dropProxy, Done: func() { _ = c.Close() }, Cut: e.cutTCP}
	if r.Terminate {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: t.Certificate}
		if th, ok := r.Handler.(tlsTerminator); ok {
			cfg = th.TLSConfig()
		}
		tc := tls.Server(&replayconn.Conn{Conn: raw, Pending: peeked}, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), e.readHeaderTimeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			e.log.Debug("tcp: tls handshake failed", "router", r.Name, "error", err)
			_ = c.Close()
			return
		}
		conn.Conn, conn.Peeked = tc, nil
	}
	c.markUpgraded() // a stream: the longer drain when a successor takes over
	e.inflight.Add(1)
	defer e.inflight.Add(-1)
	st := e.active.Stats().Router(r.Name) // the API's live counts (routestats)
	st.Opened()
	defer st.Closed()
	conn.Stats = st
	if e.obs != nil { // traefik_open_connections{protocol="TCP"}
		e.obs.Conn(e.name, "tcp", 1)
		defer e.obs.Conn(e.name, "tcp", -1)
	}
	live := e.tcpLive.add(t, r.Name, raw)
	defer e.tcpLive.remove(live)
	r.Handler.ServeTCP(conn)
}

// peekPostgres reports whether br starts with a Postgres SSLRequest,
// peeking one byte at a time so that a protocol sending fewer bytes and
// waiting for an answer is not blocked (Traefik isPostgres).
func peekPostgres(br *bufio.Reader) (bool, error) {
	for i := 1; i <= len(postgresSSLRequest); i++ {
		b, err := br.Peek(i)
		if err != nil {
			return false, err
		}
		if !bytes.Equal(b, postgresSSLRequest[:i]) {
			return false, nil
		}
	}
	return true, nil
}

// peekHello peeks the TLS ClientHello and parses it for SNI and ALPN into
// cd. isTLS is false when the first byte is not a handshake record
// (0x16). SSLv2 (0x80) counts as TLS so the handshake refuses it (Traefik
// clientHelloInfo). The hello is read by crypto/tls itself from the peeked
// bytes, so one split over several records is reassembled as Traefik v3
// (whose peekConn feeds tls.Server) and Go's TLS server do, within br's
// buffer (maxHelloRecord bytes in all); a longer or malformed hello gives
// no SNI, and the connection goes on as TLS without it.
func peekHello(br *bufio.Reader, cd *tcpmux.ConnData) (isTLS bool, err error) {
	b, err := br.Peek(1)
	if err != nil {
		return false, err
	}
	switch b[0] {
	case 0x16:
	case 0x80:
		return true, nil
	default:
		return false, nil
	}
	srv := tls.Server(helloConn{r: &peekReader{br: br}}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			cd.ServerName = toLowerASCII(h.ServerName)
			cd.ALPN = h.SupportedProtos
			return nil, errHelloSeen
		},
	})
	_ = srv.Handshake()
	return true, nil
}

// peekReader reads br's bytes without consuming them: each Read returns
// what is buffered past the bytes already returned, waiting for at least
// one more byte when none is (bounded by the connection's read deadline),
// and fails with bufio.ErrBufferFull past br's size.
type peekReader struct {
	br  *bufio.Reader
	off int
}

func (r *peekReader) Read(p []byte) (int, error) {
	if r.off >= r.br.Buffered() {
		if _, err := r.br.Peek(r.off + 1); err != nil {
			return 0, err
		}
	}
	b, _ := r.br.Peek(r.br.Buffered())
	n := copy(p, b[r.off:])
	r.off += n
	return n, nil
}

var errHelloSeen = errors.New("client hello read")

func toLowerASCII(s string) string {
	for i := range len(s) {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return string(bytes.ToLower([]byte(s)))
		}
	}
	return s
}

// helloConn feeds recorded bytes to a tls.Server; writes fail.
type helloConn struct {
	r io.Reader
	net.Conn
}

func (c helloConn) Read(p []byte) (int, error)     { return c.r.Read(p) }
func (helloConn) Write(p []byte) (int, error)      { return 0, io.EOF }
func (helloConn) SetReadDeadline(time.Time) error  { return nil }
func (helloConn) SetWriteDeadline(time.Time) error { return nil }
func (helloConn) SetDeadline(time.Time) error      { return nil }

// proxiedConn is an accepted connection whose client address came from a
// trusted PROXY protocol header: RemoteAddr reports it to HTTP (forwarded
// headers, ClientIP, access logs); everything else is the socket's.
type proxiedConn struct {
	*net.TCPConn
	remote net.Addr
}

// RemoteAddr is the client address from the PROXY protocol header.
func (c *proxiedConn) RemoteAddr() net.Addr { return c.remote }

// proxyPolicy is entryPoints.<ep>.proxyProtocol: whose headers are read.
type proxyPolicy struct{ trustList }

// newProxyPolicy parses entryPoints.<ep>.proxyProtocol; nil when unset.
func newProxyPolicy(c *static.ProxyProtocol) (*proxyPolicy, error) {
	if c == nil {
		return nil, nil
	}
	tl, err := parseTrustList(c.Insecure, c.TrustedIPs)
	if err != nil {
		return nil, err
	}
	return &proxyPolicy{tl}, nil
}

// acceptKeepAlive is the keep-alive of every accepted connection
// (listenConfig): Go's listener default, 15s idle and 15s between probes,
// with the probe count the system's default (Count -1: no setsockopt).
var acceptKeepAlive = net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 15 * time.Second, Count: -1}
