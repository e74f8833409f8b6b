package dataplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/certs"
)

// connInfo is what the entrypoint knows about one client connection. It is
// stored once per connection in the connection's context (http.Server's
// ConnContext) and never written afterwards.
type connInfo struct {
	entryPoint string
	tls        bool
	// trusted is the entrypoint's forwardedHeaders decision for the peer:
	// true when the peer address is in trustedIPs (or insecure is set), in
	// which case inbound X-Forwarded-* values are kept (case 026).
	trusted bool
	// hs is what the handshake chose: the TLS options for the
	// connection's SNI (written by the certificate store) and the
	// certificate (see configForClient), both once, before any request;
	// empty for plain connections.
	hs certs.Handshake
	// start and requests serve keepAliveMaxTime and keepAliveMaxRequests.
	start    time.Time
	requests atomic.Int64
}

type connInfoKey struct{}

// withConnInfo returns ctx carrying ci.
func withConnInfo(ctx context.Context, ci *connInfo) context.Context {
	return context.WithValue(ctx, connInfoKey{}, ci)
}

// connInfoOf returns the connection facts of r, or nil when r did not come
// through a Server (handlers built by a Generation and used directly, as in
// tests, treat such requests as untrusted plain HTTP).
func connInfoOf(r *http.Request) *connInfo {
	ci, _ := r.Context().Value(connInfoKey{}).(*connInfo)
	return ci
}

// trustList decides whether a peer may set X-Forwarded-* headers.
// Source: https://doc.traefik.io/traefik/routing/entrypoints/#forwarded-headers
type trustList struct {
	insecure bool
	prefixes []netip.Prefix
}

// parseTrustList parses trustedIPs entries, each an IP or a CIDR. It
// returns an error naming the bad entry.
func parseTrustList(insecure bool, ips []string) (trustList, error) {
	tl := trustList{insecure: insecure}
	for _, s := range ips {
		if p, err := netip.ParsePrefix(s); err == nil {
			tl.prefixes = append(tl.prefixes, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return trustList{}, fmt.Errorf("trustedIPs: %q is neither an IP nor a CIDR", s)
		}
		tl.prefixes = append(tl.prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return tl, nil
}

// trusts reports whether the peer at addr (a net.Addr of a TCP connection)
// is trusted.
func (tl trustList) trusts(addr net.Addr) bool {
	if tl.insecure {
		return true
	}
	if len(tl.prefixes) == 0 {
		return false
	}
	var ip netip.Addr
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	default:
		ap, err := netip.ParseAddrPort(addr.String())
		if err != nil {
			return false
		}
		ip = ap.Addr()
	}
	ip = ip.Unmap()
	for _, p := range tl.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// helloConnInfo returns the connection facts of a TLS handshake run by a
// Server (net/http passes the connection context to the handshake), or nil.
func helloConnInfo(hello *tls.ClientHelloInfo) *connInfo {
	ctx := hello.Context()
	if ctx == nil {
		return nil
	}
	ci, _ := ctx.Value(connInfoKey{}).(*connInfo)
	return ci
}
