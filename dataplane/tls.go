package dataplane

import (
	"context"
	"crypto/tls"
	"net/http"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/dataplane/certs"
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
		Conn:       helloHandshake,
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
	ci := connInfoOf(r)
	if ci == nil || ci.hs.Policy == nil {
		return "", false
	}
	p := ci.hs.Policy
	if s := g.store; s != nil && !p.Same(s.Policy(p.Name())) {
		return p.Name() + " (changed since the handshake)", true
	}
	return p.Name(), true
}

// helloHandshake returns the certs.Handshake of the Server connection a
// TLS handshake runs on, or nil (certs.ConnOf).
func helloHandshake(hello *tls.ClientHelloInfo) *certs.Handshake {
	if ci := helloConnInfo(hello); ci != nil {
		return &ci.hs
	}
	return nil
}

// SetChallenges makes every entrypoint answer the ACME challenges of c
// ahead of any router and ahead of entrypoint redirections, as Traefik
// does, entrypoints added later included (certs.AnswerHTTP01; TLS-ALPN-01
// through the generation's certificate store, for the names c is
// validating). http01EntryPoints are the entrypoints of the resolvers'
// httpChallenge: there every request under /.well-known/acme-challenge/
// is answered by Gantry, 404 for a token it does not know (Traefik's
// acme-http@internal router, priority MaxInt), unless the entrypoint sets
// allowACMEByPass. Call it before Start; nil turns answering off.
func (s *Server) SetChallenges(c certs.Challenges, http01EntryPoints ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.challenges = c
	s.http01 = map[string]bool{}
	for _, name := range http01EntryPoints {
		s.http01[name] = true
	}
	for name, ep := range s.eps {
		ep.challenges = c
		ep.http01 = s.http01[name]
	}
}
