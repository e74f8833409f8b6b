// Package conninfo carries what an entrypoint knows about one client
// connection (the entrypoint, TLS, whether the peer is a trusted
// forwarder, what the TLS handshake chose) from the Server that accepted
// it to the handlers of a generation, through the connection's context,
// so the request path allocates nothing for it. It also reads the two
// facts net/http keeps about a request's arrival: the request-target as
// received and the local port.
package conninfo

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/certs"
)

// Info is what the entrypoint knows about one client connection. The
// Server stores it once per connection in the connection's context
// (http.Server's ConnContext) before any request; after that only
// Handshake (once, during the TLS handshake, before any request) and
// Requests change.
type Info struct {
	EntryPoint string
	TLS        bool
	// Trusted is the entrypoint's forwardedHeaders decision for the peer:
	// true when the peer address is in trustedIPs (or insecure is set), in
	// which case inbound X-Forwarded-* values are kept (case 026).
	Trusted bool
	// Handshake is what the handshake chose: the TLS options for the
	// connection's SNI (written by the certificate store) and the
	// certificate, both once, before any request; empty for plain
	// connections.
	Handshake certs.Handshake
	// Start and Requests serve keepAliveMaxTime and keepAliveMaxRequests.
	Start    time.Time
	Requests atomic.Int64
}

type key struct{}

// With returns ctx carrying ci.
func With(ctx context.Context, ci *Info) context.Context {
	return context.WithValue(ctx, key{}, ci)
}

// FromContext returns the connection facts ctx carries, or nil.
func FromContext(ctx context.Context) *Info {
	ci, _ := ctx.Value(key{}).(*Info)
	return ci
}

// Of returns the connection facts of r, or nil when r did not come through
// a Server (handlers used directly, as in tests, treat such requests as
// untrusted plain HTTP).
func Of(r *http.Request) *Info { return FromContext(r.Context()) }

// OfHello returns the connection facts of a TLS handshake run by a Server
// (net/http and the Server pass the connection context to the handshake),
// or nil.
func OfHello(hello *tls.ClientHelloInfo) *Info {
	if ctx := hello.Context(); ctx != nil {
		return FromContext(ctx)
	}
	return nil
}

// Handshake returns the certs.Handshake of the Server connection a TLS
// handshake runs on, or nil: the certificate store's certs.Options.Conn.
func Handshake(hello *tls.ClientHelloInfo) *certs.Handshake {
	if ci := OfHello(hello); ci != nil {
		return &ci.Handshake
	}
	return nil
}

// RequestTarget is the request-target of r as received (path and query,
// as Traefik's access log RequestPath), or the URL's when the server did
// not keep it.
func RequestTarget(r *http.Request) string {
	if r.RequestURI != "" {
		return r.RequestURI
	}
	return r.URL.RequestURI()
}

// LocalPort is the port r's connection was accepted on, 0 when unknown.
func LocalPort(r *http.Request) int {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}
