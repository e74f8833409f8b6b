package dataplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/dataplane/certs"
)

// BuildTLS implements router.TLSBuilder through certs.Build: one
// certificate store chosen by SNI over tls.certificates and
// tls.stores.default, with the Pool's default certificate and last good
// file pairs, and the TLS options of the hosts the generation's routers
// named (noteTLSOptions: Compile calls BuildTLS after every Build). The
// store and the resolved options also serve TCP routers that terminate
// TLS (tcpbuild.go). Errors name the certificate file or the options.
// Source: https://doc.traefik.io/traefik/https/tls/
func (g *Generation) BuildTLS(_ context.Context, c *config.TLSConfiguration) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), []error) {
	g.mu.Lock()
	hosts := maps.Clone(g.tlsHosts)
	g.mu.Unlock()
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
	g.mu.Unlock()
	return s.Certificate, errs
}

// noteTLSOptions records, for a router with tls.options, which options its
// hosts use. An unknown options name is an error (the router is disabled).
func (g *Generation) noteTLSOptions(name string, r *config.Router) error {
	if r.TLS == nil || r.TLS.Options == "" || r.TLS.Options == "default" {
		return nil
	}
	opts := r.TLS.Options
	if g.m.Config.TLS == nil || g.m.Config.TLS.Options[opts] == nil {
		return fmt.Errorf("tls.options %q does not exist", opts)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, h := range certs.RouterHosts(r) {
		if prev, ok := g.tlsHosts[h]; ok && prev != opts {
			g.log.Warn("host has routers with different TLS options; using the first", "host", h, "options", prev, "ignored", opts)
			continue
		}
		g.tlsHosts[h] = opts
	}
	return nil
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
// through the generation's certificate store). Call it before Start; nil
// turns answering off.
func (s *Server) SetChallenges(c certs.Challenges) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.challenges = c
	for _, ep := range s.eps {
		ep.challenges = c
	}
}
