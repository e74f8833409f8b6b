package dataplane

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/coalesce"
	"github.com/gantry-proxy/gantry/dataplane/conninfo"
	"github.com/gantry-proxy/gantry/dataplane/h1"
)

// h2MaxReadFrameSize is the largest frame an HTTP/2 client may send
// (SETTINGS_MAX_FRAME_SIZE, RFC 9113 §6.5.2): the protocol's default
// 16 384, as nginx, rather than Go's 1 MiB, so a client that ignores the
// setting and sends a larger frame gets the FRAME_SIZE_ERROR the RFC asks
// for (h2spec http2/4.2.3) and a frame never needs more than 16 KiB of
// buffer.
const h2MaxReadFrameSize = 16 << 10

// h2Server returns the HTTP/2 server of one listener: it is fed TLS
// connections that negotiated h2 (already handshaken) and plain ones that
// start with the h2c preface, and serves nothing else.
func (e *entryPoint) h2Server() *http.Server {
	var p http.Protocols
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:           e,
		Protocols:         &p,
		ReadTimeout:       e.readTimeout,
		ReadHeaderTimeout: e.readHeaderTimeout,
		WriteTimeout:      e.writeTimeout,
		IdleTimeout:       e.idleTimeout,
		MaxHeaderBytes:    e.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(e.log.Handler(), slog.LevelDebug),
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: int(e.maxStreams), MaxReadFrameSize: h2MaxReadFrameSize},
		ConnContext:       e.connContext,
	}
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		if tc := trackedOf(c); tc != nil {
			e.h2ConnState(tc, st)
		}
		e.countConn(c, st)
	}
	return srv
}

// countConn tells the observer a connection of c's protocol ("http",
// "https") opened (StateNew) or ended (StateClosed, or StateHijacked: an
// upgrade or an HTTP/2 handover leaves the server's count).
func (e *entryPoint) countConn(c net.Conn, st http.ConnState) {
	if e.obs == nil {
		return
	}
	switch st {
	case http.StateNew:
		e.obs.Conn(e.name, protoOf(c), 1)
	case http.StateClosed, http.StateHijacked:
		e.obs.Conn(e.name, protoOf(c), -1)
	}
}

// connContext gives a connection's requests its connInfo, created at
// accept (so the TLS handshake and every request share it).
func (e *entryPoint) connContext(ctx context.Context, c net.Conn) context.Context {
	if tc := trackedOf(c); tc != nil {
		return conninfo.With(ctx, tc.info)
	}
	return conninfo.With(ctx, &conninfo.Info{EntryPoint: e.name, Handshake: certs.Handshake{EntryPoint: e.name}, Trusted: e.trust.trusts(c.RemoteAddr()), Start: time.Now()})
}

func protoOf(c net.Conn) string {
	if tc := trackedOf(c); tc != nil && tc.info.TLS {
		return "https"
	}
	return "http"
}

// h1Server returns the HTTP/1 server of one listener; connections that
// start with the h2c preface go to h2. Goroutines that continue idle
// connections join wg.
func (e *entryPoint) h1Server(h2 *chanListener, wg *sync.WaitGroup) *h1.Server {
	return &h1.Server{
		Go:      wg.Go,
		Handler: e,
		H2C: func(c net.Conn) {
			if tc := trackedOf(c); tc != nil {
				tc.markH2C()
				tc.w = coalesce.New(tc.Conn.Conn)
				wg.Go(tc.w.Run) // writes the connection's frames until it closes
			}
			h2.push(c)
		},
		ReadHeaderTimeout: e.readHeaderTimeout,
		IdleTimeout:       e.idleTimeout,
		ReadTimeout:       e.readTimeout,
		WriteTimeout:      e.writeTimeout,
		MaxHeaderBytes:    e.maxHeaderBytes,
		MaxHeaders:        maxHeaderFields,
		ConnContext:       e.connContext,
		Draining:          e.draining.Load,
		Parked:            e.parkedHook,
		Log:               e.log,
		ConnState: func(c net.Conn, st http.ConnState) {
			if tc := trackedOf(c); tc != nil {
				if st == http.StateHijacked {
					tc.markUpgraded() // undone by H2C for an HTTP/2 handover
				}
				tc.idle.Store(st == http.StateIdle) // shutdown cuts idle waits
				busy := st == http.StateNew || st == http.StateActive
				if tc.busy.Swap(busy) != busy {
					if busy {
						e.h1busy.Add(1)
					} else {
						e.h1busy.Add(-1)
					}
				}
			}
			e.countConn(c, st)
		},
	}
}

// configForClient picks the certificate for a handshake from the live
// table and returns the config of the TLS options the certificate store
// chose for the SNI name (min/max version, suites, client auth, ALPN). A
// table without a certificate source (Builder.BuildTLS gave none) leaves
// the handshake to the entrypoint's fallback policy, which fails it for
// lack of a certificate.
func (e *entryPoint) configForClient(hello *tls.ClientHelloInfo) (*tls.Config, error) {
	cert, err := e.active.Load().Certificate(hello)
	if err != nil {
		return nil, err
	}
	ci := conninfo.OfHello(hello)
	if ci == nil {
		return nil, errors.New("tls: handshake outside a Server connection")
	}
	ci.Handshake.Cert = cert
	p := ci.Handshake.Policy
	if p == nil {
		p = e.fallbackTLS
	}
	return p.Config(), nil
}
