package main

import (
	"crypto/tls"
	"sync/atomic"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/acme"
)

// certSwitch stands for the ACME manager of the running certificate
// resolvers, which a live reload replaces (reload.go): the dataplane
// (challenges), the instance's apply listeners (Observe) and the API (certificates) hold the
// switch, not a manager. With no manager (no resolvers) it answers no
// challenge and lists no certificate, but each router asking for a
// resolver is a problem (acme.UndefinedResolverProblems).
type certSwitch struct {
	m         atomic.Pointer[acme.Manager]
	undefined atomic.Pointer[[]providers.Problem] // without a manager: of the last applied configuration
}

func (s *certSwitch) set(m *acme.Manager) { s.m.Store(m) }

// HTTP01 implements certs.Challenges.
func (s *certSwitch) HTTP01(entryPoint, host, token string) (string, bool) {
	if m := s.m.Load(); m != nil {
		return m.HTTP01(entryPoint, host, token)
	}
	return "", false
}

// TLSALPN01 implements certs.Challenges.
func (s *certSwitch) TLSALPN01(serverName string) *tls.Certificate {
	if m := s.m.Load(); m != nil {
		return m.TLSALPN01(serverName)
	}
	return nil
}

// Observe tells the manager the configuration applied (an
// instance.Listener, applyListeners).
func (s *certSwitch) Observe(mg *providers.Merged) {
	if m := s.m.Load(); m != nil {
		m.Observe(mg)
		return
	}
	var c *config.Configuration
	if mg != nil {
		c = mg.Config
	}
	p := acme.UndefinedResolverProblems(c)
	s.undefined.Store(&p)
}

// Certificates implements dashboard.Certificates.
func (s *certSwitch) Certificates() []acme.CertificateStatus {
	if m := s.m.Load(); m != nil {
		return m.Certificates()
	}
	return nil
}

// Problems implements dashboard.Certificates.
func (s *certSwitch) Problems() []providers.Problem {
	if m := s.m.Load(); m != nil {
		return m.Problems()
	}
	if p := s.undefined.Load(); p != nil {
		return *p
	}
	return nil
}
