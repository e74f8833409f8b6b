// Package routertest provides a base for router.Builder test doubles in
// the packages that compile configurations without the data plane.
package routertest

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// Base implements every router.Builder method but Build, as a builder that
// builds HTTP routers only: parent, TCP and UDP routers are disabled
// with the error each method returns; internal routes are not wrapped; no
// object is reported; there is no certificate source, no negotiated
// options (never a 421) and the bare 404. A double embeds Base and
// defines Build, and any method its test exercises.
type Base struct{}

// BuildParent fails: Base cannot build parent routers.
func (Base) BuildParent(context.Context, string, *config.Router, http.Handler) (http.Handler, error) {
	return nil, errors.New("the handler builder cannot build parent routers")
}

// WrapInternal returns h as it is.
func (Base) WrapInternal(_ context.Context, _ string, _ *config.Router, h http.Handler) http.Handler {
	return h
}

// ObjectErrors reports no object.
func (Base) ObjectErrors() []*router.ObjectUse { return nil }

// BuildTLS builds no certificate source and reports nothing.
func (Base) BuildTLS(context.Context, *config.TLSConfiguration, router.TLSHosts) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), []error) {
	return nil, nil
}

// NegotiatedTLSOptions cannot tell (ok false), so no request is answered 421.
func (Base) NegotiatedTLSOptions(*http.Request) (string, bool) { return "", false }

// BuildNotFound keeps the bare 404.
func (Base) BuildNotFound(context.Context, string) (http.Handler, error) { return nil, nil }

// BuildTCP fails: Base builds no TCP router.
func (Base) BuildTCP(context.Context, string, *config.TCPRouter) (tcpmux.Handler, error) {
	return nil, errors.New("no TCP handler builder")
}

// BuildUDP fails: Base builds no UDP router.
func (Base) BuildUDP(context.Context, string, *config.UDPRouter) (router.UDPHandler, error) {
	return nil, errors.New("no UDP handler builder")
}
