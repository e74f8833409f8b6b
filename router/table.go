package router

import (
	"crypto/tls"
	"net/http"
	"sync"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// Table is one compiled generation of the routing configuration: per
// entrypoint, the muxes for TLS and plain requests, the certificate source
// and the status report. A Table is immutable once Compile returns and is
// safe for concurrent use; the request path takes no lock.
type Table struct {
	merged   *providers.Merged
	report   *Report
	eps      map[string]*entryHandler
	tcp      map[string]*tcpmux.EntryPoint // TCP entrypoints with TCP routers
	udp      map[string]*UDPRoute          // UDP entrypoints with their router
	getCert  func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	replaced chan struct{}
	once     sync.Once
}

// entryHandler serves one entrypoint.
type entryHandler struct {
	name   string
	plain  *mux // routers without a tls block
	secure *mux // routers with a tls block
	// notFound serves requests no router matches (Builder.BuildNotFound).
	notFound http.Handler
	// negotiated tells the tls.options of a request's connection
	// (Builder.NegotiatedTLSOptions; nil: never 421); tlsHosts are the entrypoint's
	// host → options (resolveTLS); tcp is its TCP routing, or nil.
	negotiated func(*http.Request) (string, bool)
	tlsHosts   map[string]string
	tcp        *tcpmux.EntryPoint
}

var notFound = http.HandlerFunc(http.NotFound)

// ServeHTTP routes r: TLS requests (r.TLS != nil) to the routers with a
// tls block, other requests to those without one (Traefik). A TLS request
// whose connection negotiated other TLS options than its router requires
// gets 421 Misdirected Request (misdirected). It answers 404 ("404 page
// not found") when no router matches, or what the entrypoint's
// Builder.BuildNotFound handler answers.
func (e *entryHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, bad := e.route(r)
	switch {
	case bad:
		misdirected.ServeHTTP(w, r)
	case rt != nil:
		rt.h.ServeHTTP(w, r)
	default:
		e.notFound.ServeHTTP(w, r)
	}
}

// route returns the route serving r (nil: none), and whether r is
// misdirected (then it must get 421 whatever route matched).
func (e *entryHandler) route(r *http.Request) (rt *route, misdirected bool) {
	in := newInput(r)
	rt = e.mux(r).lookup(&in)
	if r.TLS != nil && e.misdirected(r, rt, &in) {
		return nil, true
	}
	return rt, false
}

func (e *entryHandler) mux(r *http.Request) *mux {
	if r.TLS != nil {
		return e.secure
	}
	return e.plain
}

// Handler returns the handler of entryPoint: it dispatches each request to
// the handler chain of the first matching router (see entryHandler). It is
// never nil; for an entrypoint the Table does not know, every request gets
// 404.
func (t *Table) Handler(entryPoint string) http.Handler {
	if e, ok := t.eps[entryPoint]; ok {
		return e
	}
	return notFound
}

// Lookup returns the qualified name and handler chain of the router that
// would serve r on entryPoint, or ("", nil) when none matches or r is
// misdirected (Handler answers 421 then). It is for callers that need to
// know the outcome before serving, such as an entry handler that reports
// unmatched requests; it does not allocate in the common case.
func (t *Table) Lookup(entryPoint string, r *http.Request) (router string, h http.Handler) {
	e, ok := t.eps[entryPoint]
	if !ok {
		return "", nil
	}
	if rt, _ := e.route(r); rt != nil {
		return rt.name, rt.h
	}
	return "", nil
}

// TCP returns the TCP routing of entryPoint, or nil when it has no TCP
// router (its connections are HTTP only).
func (t *Table) TCP(entryPoint string) *tcpmux.EntryPoint { return t.tcp[entryPoint] }

// UDP returns the UDP router of entryPoint, or nil when it has none.
func (t *Table) UDP(entryPoint string) *UDPRoute { return t.udp[entryPoint] }

// Certificate returns the certificate for a TLS handshake from the
// certificate source the Builder provided (Builder.BuildTLS). Without one
// it returns (nil, nil), so crypto/tls falls back
// to tls.Config.Certificates. Use it as tls.Config.GetCertificate through
// Active.Load, so certificates belong to the same generation as routes.
func (t *Table) Certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if t.getCert == nil {
		return nil, nil
	}
	return t.getCert(hello)
}

// Version is the Merged.Version the table was compiled from ("" for the
// initial empty table).
func (t *Table) Version() string { return t.merged.Version }

// Merged returns the configuration the table was compiled from; never nil
// (an empty Merged for NewActive's initial table). It must not be modified.
func (t *Table) Merged() *providers.Merged { return t.merged }

// Report returns the status of every router, service and middleware of the
// generation. It must not be modified.
func (t *Table) Report() *Report { return t.report }

// Replaced returns a channel that is closed when Active.Swap replaces this
// table with a newer one.
func (t *Table) Replaced() <-chan struct{} { return t.replaced }

func (t *Table) markReplaced() { t.once.Do(func() { close(t.replaced) }) }

// emptyTable is a table with no routes, compiled from an empty Merged.
func emptyTable() *Table {
	return &Table{
		merged:   &providers.Merged{Config: &config.Configuration{}},
		report:   newReport(),
		eps:      map[string]*entryHandler{},
		tcp:      map[string]*tcpmux.EntryPoint{},
		udp:      map[string]*UDPRoute{},
		replaced: make(chan struct{}),
	}
}

// hasStreamRouter reports whether name is a TCP or UDP router of t's
// configuration (whose live counters Active keeps across the swap).
func (t *Table) hasStreamRouter(name string) bool {
	if t.merged == nil || t.merged.Config == nil {
		return false
	}
	c := t.merged.Config
	if c.TCP != nil && c.TCP.Routers[name] != nil {
		return true
	}
	return c.UDP != nil && c.UDP.Routers[name] != nil
}
