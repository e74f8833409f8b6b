package router

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// Builder builds the handlers of one generation for Compile: the chains of
// the HTTP, TCP and UDP routers, the entrypoints' not-found handlers and
// the certificate source. The data plane's generation implements it;
// router tests use doubles. Compile calls the methods from its own
// goroutine, in the order they are listed here, and never again once it
// has returned, except NegotiatedTLSOptions, which the Table calls per
// request.
//
// Names are qualified ("web@docker"), and so are the names a router's
// configuration refers to (service, middlewares). An error from a build
// method disables the router (or the object) it was called for only; when
// the cause is a service or middleware, the error wraps an *ObjectError
// naming it, and the Report marks that object in error too, with the
// routers using it.
type Builder interface {
	// Build returns the complete handler chain of HTTP router name (its
	// middlewares, then its service). Compile calls it once per router
	// that passed its checks (rule, entrypoints, references), root
	// routers in name order; a child router (r.ParentRefs is set) is
	// built when its first parent is reached, before that parent, once
	// however many parents it has, and gets nothing a root router adds
	// around its chain (entrypoint middlewares, observability). A nil handler with a nil error
	// disables the router ("builder returned no handler").
	Build(ctx context.Context, name string, r *config.Router) (http.Handler, error)

	// BuildParent returns the handler of router name that has children
	// (Traefik v3.6 multi-layer routing, router parentRefs): its
	// middlewares, and for a root what Build adds around a router, around
	// next, which picks the matching child router (404 when none
	// matches). Compile calls it in place of Build, after the children
	// are built, for a parent with at least one usable child.
	BuildParent(ctx context.Context, name string, r *config.Router, next http.Handler) (http.Handler, error)

	// WrapInternal returns h, the ready handler of Options.Internal route
	// name, wrapped so that the route is observed (metrics, access log,
	// tracing) like the configuration's routers; r is the router's
	// configuration as the API shows it. Compile calls it once per
	// internal route whose rule and entrypoint are valid, after every
	// Build. It cannot fail.
	WrapInternal(ctx context.Context, name string, r *config.Router, h http.Handler) http.Handler

	// ObjectErrors returns the objects in error that routers use without
	// naming them (an entrypoint's http.middlewares, which a builder
	// serves around each router, failing closed), with the routers they
	// affect; Compile reports each once, rather than on every router.
	// Compile calls it once, after every Build, BuildParent and
	// WrapInternal. nil: none.
	ObjectErrors() []*ObjectUse

	// BuildTLS builds the certificate source of the generation from the
	// merged TLS configuration c (never nil) and hosts, the tls.options
	// each HTTPS host of each entrypoint uses (a host not listed uses
	// "default"); the Table serves certificates through getCertificate
	// (nil: none, crypto/tls falls back to its own certificates). Compile
	// calls it once, after ObjectErrors. A problem with one certificate or
	// option is one of errs, naming the certificate file or the option,
	// and disables only what it names. Options that cannot be built, or
	// that hosts name but c lacks, are a *TLSOptionsError: the HTTPS
	// routers resolved to them are disabled, and the handshakes of their
	// hosts must fail. A *TLSWarning changes nothing served
	// (Report.TLSWarnings).
	BuildTLS(ctx context.Context, c *config.TLSConfiguration, hosts TLSHosts) (getCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error), errs []error)

	// NegotiatedTLSOptions tells which tls.options the connection of TLS
	// request r negotiated (ok false when it cannot tell, as for a
	// request that came through no server). An HTTPS router answers 421
	// Misdirected Request to a request whose connection negotiated other
	// options than the router resolved to (the SNI chose options the
	// Host's routers do not use: domain fronting, a coalesced HTTP/2
	// connection, no SNI at all), as Traefik's snicheck middleware does.
	// A name must also differ when the options of that name changed since
	// the connection negotiated them. Compile only keeps the method: the
	// Table calls it for every TLS request it routes, concurrently, so it
	// must be safe for concurrent use and cheap.
	NegotiatedTLSOptions(r *http.Request) (name string, ok bool)

	// BuildNotFound returns the handler for the requests of entryPoint
	// that match no router. Compile calls it once per HTTP entrypoint, in
	// Options.EntryPoints order, after BuildTLS. (nil, nil) keeps the bare
	// 404; an error is reported (Report.NotFound) and keeps the bare 404
	// too.
	BuildNotFound(ctx context.Context, entryPoint string) (http.Handler, error)

	// BuildTCP returns the handler of TCP router name (its middlewares,
	// then its service), so that HTTP, TCP and UDP swap in one step.
	// Compile calls it once per TCP router that passed its checks, in
	// name order, after every BuildNotFound. An error wrapping
	// *ObjectError marks the named "tcp service" or "tcp middleware"; a
	// nil handler with a nil error disables the router.
	BuildTCP(ctx context.Context, name string, r *config.TCPRouter) (tcpmux.Handler, error)

	// BuildUDP returns the server picker of UDP router name's service.
	// Compile calls it once per UDP router that passed its checks, in
	// name order, after every BuildTCP. An error wrapping *ObjectError
	// marks the named "udp service"; a nil handler with a nil error
	// disables the router.
	BuildUDP(ctx context.Context, name string, r *config.UDPRouter) (UDPHandler, error)
}

// ObjectUse is an object in error and the routers it affects.
type ObjectUse struct {
	Err    *ObjectError
	UsedBy []string
}

// ObjectError is an error in a named service or middleware, found while
// building a router that uses it. Kind is "service" or "middleware" (or
// "tcp service", "tcp middleware", "udp service"); Name is qualified.
type ObjectError struct {
	Kind string
	Name string
	Err  error
}

// Error renders "service api@docker: …".
func (e *ObjectError) Error() string { return fmt.Sprintf("%s %s: %v", e.Kind, e.Name, e.Err) }

// Unwrap returns the cause.
func (e *ObjectError) Unwrap() error { return e.Err }
