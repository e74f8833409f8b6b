package tcpmux

import (
	"github.com/gantry-proxy/gantry/router/routestats"

	"cmp"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// Conn is one client connection handed to a Handler. Reads and writes go
// to the client: the accepted socket (a *net.TCPConn, so that io.Copy can
// splice), or the *tls.Conn when Gantry terminated TLS. Peeked holds the
// bytes already read from the client while routing; a handler sends them
// before anything else it reads. Client is the client's address (the one a
// trusted PROXY protocol header gave, else the peer's).
type Conn struct {
	net.Conn
	Peeked []byte
	Client netip.AddrPort
	// Postgres is set when the client negotiated TLS with a Postgres
	// SSLRequest that Gantry answered: a passthrough handler must replay
	// the SSLRequest to the server and swallow its one-byte answer.
	Postgres bool
	// DropProxyHeader is set for an untrusted peer on an entrypoint with
	// proxyProtocol whose connection was routed before it sent anything:
	// the byte copy reads a PROXY protocol header the client's bytes start
	// with and drops it (Traefik's go-proxyproto IGNORE policy).
	DropProxyHeader bool
	// Done is called once when the connection is closed.
	Done func()
	// Cut, when not nil, is closed when the entrypoint closes the
	// connections its shutdown's grace period left: a byte copy told to
	// wait for the other direction without bound (a negative
	// terminationDelay) stops waiting then.
	Cut <-chan struct{}
	// Stats, when set, are the router's live counters: the byte copy adds
	// what it forwards each way.
	Stats  *routestats.Counters
	closed bool
}

// Close closes the client connection and runs Done. Not safe for
// concurrent use with itself.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	err := c.Conn.Close()
	if c.Done != nil {
		c.Done()
	}
	return err
}

// Handler serves routed TCP connections; ServeTCP owns c and closes it
// before returning. Implementations are safe for concurrent use.
type Handler interface {
	ServeTCP(c *Conn)
}

// Route is one compiled TCP router on one entrypoint.
type Route struct {
	Name     string // qualified router name
	Priority int
	CatchAll bool // the rule is exactly HostSNI(`*`)
	// Terminate is set for a TLS router without passthrough: Gantry runs
	// the TLS handshake and the handler sees the decrypted stream.
	Terminate bool
	Match     Matcher
	Handler   Handler
}

// Mux is an ordered list of routes: priority descending, then name.
type Mux struct{ routes []*Route }

// NewMux sorts routes into a Mux.
func NewMux(routes []*Route) *Mux {
	rs := slices.Clone(routes)
	slices.SortStableFunc(rs, func(a, b *Route) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Name, b.Name))
	})
	return &Mux{routes: rs}
}

// Match returns the first route matching c, or nil.
func (m *Mux) Match(c *ConnData) *Route {
	if m == nil {
		return nil
	}
	for _, r := range m.routes {
		if r.Match(c) {
			return r
		}
	}
	return nil
}

// Len is the number of routes.
func (m *Mux) Len() int {
	if m == nil {
		return 0
	}
	return len(m.routes)
}

// Has reports whether a route named name is in m.
func (m *Mux) Has(name string) bool {
	return m != nil && slices.ContainsFunc(m.routes, func(r *Route) bool { return r.Name == name })
}

// EntryPoint is the TCP routing of one entrypoint in one generation.
type EntryPoint struct {
	// Plain holds the routers without a tls block (Traefik muxerTCP).
	Plain *Mux
	// TLS holds the routers with a tls block, passthrough or terminated
	// (Traefik muxerTCPTLS).
	TLS *Mux
	// HTTPSHosts are the hosts named by Host() in the entrypoint's HTTPS
	// routers ("*.example.com" for a wildcard Host); HTTPS is set when
	// the entrypoint has any HTTPS router, HTTPSCatchAll when one of them
	// has no Host (Traefik muxerHTTPS: a route per host, plus a
	// HostSNI(`*`) one for the routers without a Host only).
	HTTPSHosts    map[string]bool
	HTTPS         bool
	HTTPSCatchAll bool
}

// httpsHost reports whether an HTTPS router names sni: exactly, or by a
// wildcard covering its first label.
func (e *EntryPoint) httpsHost(sni string) bool {
	if sni == "" {
		return false
	}
	if e.HTTPSHosts[sni] {
		return true
	}
	i := strings.IndexByte(sni, '.')
	return i > 0 && e.HTTPSHosts["*"+sni[i:]]
}

// Empty reports whether the entrypoint has no TCP router (then its
// connections go to HTTP untouched).
func (e *EntryPoint) Empty() bool { return e == nil || e.Plain.Len()+e.TLS.Len() == 0 }

// Has reports whether router name is routed on e.
func (e *EntryPoint) Has(name string) bool { return e != nil && (e.Plain.Has(name) || e.TLS.Has(name)) }

// Decision is where a connection goes.
type Decision int

// The decisions of Route.
const (
	// ToHTTP: hand the connection to the entrypoint's HTTP or HTTPS server.
	ToHTTP Decision = iota
	// ToTCP: serve it with the returned route.
	ToTCP
	// Refuse: close it (a TLS ClientHello nothing serves and no HTTPS
	// router exists is still answered by the HTTPS server: see Route).
)

// Route decides, for a connection whose first bytes were read, between
// the TCP routes and HTTP, following Traefik v3
// (pkg/server/router/tcp/router.go ServeTCP):
//
//   - not TLS: the first matching route without TLS (ServerName empty, so
//     only rules such as HostSNI(`*`) or ClientIP match), else HTTP;
//   - TLS: a TLS-ALPN-01 challenge Gantry answers (ConnData.ACMEChallenge)
//     goes to the HTTPS server; an HTTPS router whose Host is the SNI
//     (exactly or by wildcard) wins first ("an HTTPS router takes
//     precedence over a TCP-TLS router only if it is not HostSNI(`*`)");
//     then a matching TLS route that is not the catch-all; then HTTPS
//     when one of its routers has no Host (its catch-all); then the TLS
//     catch-all HostSNI(`*`), which so receives every unknown or missing
//     SNI; else HTTPS (which answers 404 after the handshake, as
//     Traefik's httpsForwarder does).
func (e *EntryPoint) Route(c *ConnData, isTLS bool) (Decision, *Route) {
	if !isTLS {
		if r := e.Plain.Match(c); r != nil {
			return ToTCP, r
		}
		return ToHTTP, nil
	}
	if c.ACMEChallenge || e.httpsHost(c.ServerName) {
		return ToHTTP, nil
	}
	r := e.TLS.Match(c)
	if r != nil && !r.CatchAll {
		return ToTCP, r
	}
	if e.HTTPSCatchAll {
		return ToHTTP, nil
	}
	if r != nil {
		return ToTCP, r
	}
	return ToHTTP, nil
}

// ServeFirst reports whether connections can be routed before the client
// sends anything (Traefik: routes without TLS exist and neither TLS routes
// nor HTTPS routers do), and returns the route for c then; nil means the
// first bytes must be read. This keeps server-first protocols (SMTP,
// MySQL) from waiting for a client byte that never comes.
func (e *EntryPoint) ServeFirst(c *ConnData) *Route {
	if e.Plain.Len() == 0 || e.TLS.Len() > 0 || e.HTTPS {
		return nil
	}
	return e.Plain.Match(c)
}

// Routes returns the routes of m in order; the slice must not be
// modified.
func (m *Mux) Routes() []*Route {
	if m == nil {
		return nil
	}
	return m.routes
}
