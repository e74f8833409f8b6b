package generation

import (
	"context"
	"crypto/tls"
	"net/http"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/conninfo"
	"github.com/gantry-proxy/gantry/router"
)

// BuildTLS implements router.Builder through certs.Build: one
// certificate store chosen by SNI over tls.certificates and
// tls.stores.default, with the Pool's default certificate and last good
// file pairs, and the TLS options hosts resolved to per entrypoint
// (router.TLSHosts). Options that cannot be built, or that hosts name but
// do not exist, fail the handshakes of those hosts. The store and the
// options also serve TCP routers that terminate TLS (tcpbuild.go). Errors
// name the certificate file or the options.
// Source: https://doc.traefik.io/traefik/https/tls/
func (g *Generation) BuildTLS(_ context.Context, c *config.TLSConfiguration, hosts router.TLSHosts) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), []error) {
	s, policies, errs := certs.Build(c, certs.Options{
		Hosts:      hosts,
		Cache:      g.pool.kept,
		Challenges: g.opts.Challenges,
		Stapler:    g.opts.Stapler,
		Conn:       conninfo.Handshake,
	})
	g.mu.Lock()
	g.certGet = s.Certificate
	g.tlsPolicies = policies
	g.store = s
	g.mu.Unlock()
	return s.Certificate, errs
}

// NegotiatedTLSOptions implements router.Builder: the tls.options
// name the request's connection negotiated, read from the Handshake the
// certificate store filled in. When the options of that name are no
// longer the same in this generation (edited since the connection's
// handshake), the name is marked so that it matches no router, and the
// request gets 421: the client reconnects under the current options.
// ok is false for requests that came through no TLS server connection.
func (g *Generation) NegotiatedTLSOptions(r *http.Request) (string, bool) {
	ci := conninfo.Of(r)
	if ci == nil || ci.Handshake.Policy == nil {
		return "", false
	}
	p := ci.Handshake.Policy
	if s := g.store; s != nil && !p.Same(s.Policy(p.Name())) {
		return p.Name() + " (changed since the handshake)", true
	}
	return p.Name(), true
}
