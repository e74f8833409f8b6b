package router

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"

	"github.com/gantry-proxy/gantry/config"
)

// HandlerBuilder turns one router's configuration into its complete handler
// chain (middlewares, then the service). dataplane implements it; Compile is
// its only caller, once per router per generation, from one goroutine.
//
// name is the qualified router name ("web@docker"); the names r refers to
// (service, middlewares) are qualified too. An error disables that router
// only. When the cause is a service or middleware, the error wraps an
// *ObjectError naming it, so the Report marks that object in error as well.
type HandlerBuilder interface {
	Build(ctx context.Context, name string, r *config.Router) (http.Handler, error)
}

// TLSBuilder is an optional capability of a HandlerBuilder: when the builder
// implements it, Compile calls it once per generation with the merged TLS
// configuration and the tls.options each host of each entrypoint uses
// (hosts; a host not listed uses "default"), and the Table serves
// certificates through the returned function. Problems with single
// certificates or options are returned as errs (each naming the
// certificate file or option); they disable only what they name. Options
// that cannot be built, or that hosts name but the configuration lacks,
// are returned as *TLSOptionsError, and the handshakes of the hosts using
// them must fail; *TLSWarning errors are warnings only.
type TLSBuilder interface {
	BuildTLS(ctx context.Context, c *config.TLSConfiguration, hosts TLSHosts) (getCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error), errs []error)
}

// NotFoundBuilder is an optional capability of a HandlerBuilder: Compile
// calls BuildNotFound once per HTTP entrypoint, and the entrypoint serves
// requests that match no router with the returned handler. (nil, nil)
// keeps the bare 404; an error is reported (Report.NotFound) and keeps the
// bare 404 too.
type NotFoundBuilder interface {
	BuildNotFound(ctx context.Context, entryPoint string) (http.Handler, error)
}

// ObjectErrorReporter is an optional capability of a HandlerBuilder: after
// every Build, Compile marks the objects it returns in error, with the
// routers using them. It is for objects a router uses without naming
// them, such as an entrypoint's http.middlewares, which a builder serves
// around the router (failing closed) while the error is reported once
// per object rather than on every router.
type ObjectErrorReporter interface {
	ObjectErrors() []*ObjectUse
}

// ObjectUse is an object in error and the routers it affects.
type ObjectUse struct {
	Err    *ObjectError
	UsedBy []string
}

// ObjectError is an error in a named service or middleware, found while
// building a router that uses it. Kind is "service" or "middleware"; Name is
// qualified.
type ObjectError struct {
	Kind string
	Name string
	Err  error
}

// Error renders "service api@docker: …".
func (e *ObjectError) Error() string { return fmt.Sprintf("%s %s: %v", e.Kind, e.Name, e.Err) }

// Unwrap returns the cause.
func (e *ObjectError) Unwrap() error { return e.Err }

// InternalWrapper is an optional capability of a HandlerBuilder: Compile
// passes each internal route's handler through it, with the router's
// configuration as the API shows it, so that internal routers are
// observed (metrics, access log, tracing) like the others.
type InternalWrapper interface {
	WrapInternal(ctx context.Context, name string, r *config.Router, h http.Handler) http.Handler
}
