package dataplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/conninfo"
)

// h3Endpoint is entryPoints.<ep>.http3: an HTTP/3 server (quic-go, as
// Traefik uses) on the entrypoint's port over UDP. It serves the
// entrypoint's own handler (entryPoint.ServeHTTP: the same live table and
// generation as HTTP/1.1 and HTTP/2), and its TLS handshakes go through
// the same configForClient as the TCP side: the certificate store of the
// live table and the TLS options chosen for the SNI name, client
// authentication included, so a router whose options require a client
// certificate refuses an HTTP/3 client without one exactly as on TCP
// (Traefik CVE-2026-53622 was an mTLS bypass over HTTP/3). Each QUIC
// connection gets a connInfo (entrypoint, forwarded-headers trust of the
// peer) like a TCP one and holds one of the entrypoint's connection slots
// (maxConnections counts TCP and QUIC together). The entrypoint's TLS responses on TCP advertise it
// with Alt-Svc: h3=":port"; ma=2592000.
// Source: https://doc.traefik.io/traefik/reference/install-configuration/entrypoints/#http3
type h3Endpoint struct {
	advertised int // 0: the bound port
	altSvc     string

	pc  net.PacketConn
	tr  *quic.Transport
	srv *http3.Server
}

var errConnCap = errors.New("http3: connection cap reached")

func newH3(c *static.EntryHTTP3) (*h3Endpoint, error) {
	if c == nil {
		return nil, nil
	}
	if c.AdvertisedPort < 0 || c.AdvertisedPort > 65535 {
		return nil, fmt.Errorf("http3.advertisedPort: %d is not a port", c.AdvertisedPort)
	}
	return &h3Endpoint{advertised: c.AdvertisedPort}, nil
}

// listenH3 binds the UDP socket on the entrypoint's (bound) TCP address.
func (e *entryPoint) listenH3(ctx context.Context) error {
	if e.h3 == nil {
		return nil
	}
	e.mu.Lock()
	addr := e.listeners[0].Addr().(*net.TCPAddr)
	e.mu.Unlock()
	host, _, _ := net.SplitHostPort(e.address)
	pc, err := e.inheritedH3(addr.Port) // binary upgrade
	if err == nil && pc == nil {
		pc, err = (&net.ListenConfig{}).ListenPacket(ctx, "udp", net.JoinHostPort(host, strconv.Itoa(addr.Port)))
	}
	if err != nil {
		return fmt.Errorf("http3: %w", err)
	}
	e.h3.pc = pc
	port := e.h3.advertised
	if port == 0 {
		port = pc.LocalAddr().(*net.UDPAddr).Port
	}
	e.h3.altSvc = fmt.Sprintf(`h3=":%d"; ma=2592000`, port)
	return nil
}

// serveH3 starts the HTTP/3 server; its goroutine joins wg.
func (e *entryPoint) serveH3(wg *sync.WaitGroup) {
	h := e.h3
	if h == nil || h.pc == nil {
		return
	}
	h.tr = &quic.Transport{
		Conn: h.pc,
		ConnContext: func(ctx context.Context, ci *quic.ClientInfo) (context.Context, error) {
			// A QUIC connection takes one of the entrypoint's connection
			// slots (transport.maxConnections, shared with TCP); with
			// none free the connection is refused rather than queued.
			select {
			case e.slots <- struct{}{}:
				context.AfterFunc(ctx, func() { <-e.slots })
			default:
				return nil, errConnCap
			}
			if e.obs != nil {
				// Counted as protocol "udp" (traefik_open_connections
				// protocol UDP); quic-go ends ctx when the connection
				// closes or its handshake fails.
				e.obs.Conn(e.name, "udp", 1)
				context.AfterFunc(ctx, func() { e.obs.Conn(e.name, "udp", -1) })
			}
			return conninfo.With(ctx, &conninfo.Info{EntryPoint: e.name, Handshake: certs.Handshake{EntryPoint: e.name}, TLS: true, Trusted: e.trust.trusts(ci.RemoteAddr), Start: time.Now()}), nil
		},
	}
	h.srv = &http3.Server{
		Handler:        e,
		MaxHeaderBytes: e.maxHeaderBytes,
		IdleTimeout:    e.idleTimeout,
		Logger:         slog.New(e.log.Handler()).With("entrypoint", e.name, "proto", "h3"),
		ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
			if ci := conninfo.FromContext(c.Context()); ci != nil {
				return conninfo.With(ctx, ci)
			}
			return ctx
		},
	}
	tlsConf := http3.ConfigureTLSConfig(&tls.Config{
		MinVersion:         tls.VersionTLS13,
		GetConfigForClient: e.configForClient,
	})
	ln, err := h.tr.ListenEarly(tlsConf, &quic.Config{Allow0RTT: false, MaxIdleTimeout: e.idleTimeoutOr(30 * time.Second)})
	if err != nil {
		e.log.Error("http3: listen", "entrypoint", e.name, "error", err)
		return
	}
	wg.Go(func() { _ = h.srv.ServeListener(ln) })
}

func (e *entryPoint) idleTimeoutOr(d time.Duration) time.Duration {
	if e.idleTimeout > 0 {
		return e.idleTimeout
	}
	return d
}

// shutdownH3 stops the HTTP/3 server gracefully within ctx, then closes
// the socket.
func (e *entryPoint) shutdownH3(ctx context.Context) {
	h := e.h3
	if h == nil {
		return
	}
	if h.srv != nil {
		_ = h.srv.Shutdown(ctx)
		_ = h.srv.Close()
	}
	if h.tr != nil {
		_ = h.tr.Close()
	}
	if h.pc != nil {
		_ = h.pc.Close()
	}
}

// advertiseH3 adds Alt-Svc to a TLS response on TCP of an entrypoint
// serving HTTP/3.
func (e *entryPoint) advertiseH3(w http.ResponseWriter, r *http.Request) {
	if e.h3 != nil && e.h3.altSvc != "" && r.TLS != nil && r.ProtoMajor < 3 {
		w.Header()["Alt-Svc"] = append(w.Header()["Alt-Svc"], e.h3.altSvc)
	}
}
