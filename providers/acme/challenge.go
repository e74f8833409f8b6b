package acme

import (
	"context"
	"crypto/tls"
	"strings"
	"sync"

	"github.com/go-acme/lego/v5/challenge/tlsalpn01"
)

// challenges holds the pending HTTP-01 tokens and TLS-ALPN-01 certificates
// of every resolver. Reads happen on the request path (only for
// /.well-known/acme-challenge/ requests and acme-tls/1 handshakes).
type challenges struct {
	mu   sync.RWMutex
	http map[string]httpToken        // token -> pending answer
	alpn map[string]*tls.Certificate // domain -> validation certificate
}

type httpToken struct {
	domain, keyAuth, entryPoint string
}

func newChallenges() *challenges {
	return &challenges{http: map[string]httpToken{}, alpn: map[string]*tls.Certificate{}}
}

// http01Provider is a lego challenge.Provider publishing tokens for entryPoint.
type http01Provider struct {
	c          *challenges
	entryPoint string
}

func (p http01Provider) Present(_ context.Context, domain, token, keyAuth string) error {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	p.c.http[token] = httpToken{domain: strings.ToLower(domain), keyAuth: keyAuth, entryPoint: p.entryPoint}
	return nil
}

func (p http01Provider) CleanUp(_ context.Context, _, token, _ string) error {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	delete(p.c.http, token)
	return nil
}

// tlsALPN01 is a lego challenge.Provider publishing validation
// certificates (RFC 8737 §3).
type tlsALPN01 struct{ c *challenges }

func (p tlsALPN01) Present(_ context.Context, domain, _, keyAuth string) error {
	cert, err := tlsalpn01.ChallengeCert(domain, keyAuth)
	if err != nil {
		return err
	}
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	p.c.alpn[strings.ToLower(domain)] = cert
	return nil
}

func (p tlsALPN01) CleanUp(_ context.Context, domain, _, _ string) error {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	delete(p.c.alpn, strings.ToLower(domain))
	return nil
}

// HTTP01 implements dataplane.Challenges: the key authorization for token
// when its challenge is for host on entryPoint.
func (m *Manager) HTTP01(entryPoint, host, token string) (string, bool) {
	m.chal.mu.RLock()
	t, ok := m.chal.http[token]
	m.chal.mu.RUnlock()
	if !ok || t.domain != host || t.entryPoint != entryPoint {
		return "", false
	}
	return t.keyAuth, true
}

// TLSALPN01 implements dataplane.Challenges.
func (m *Manager) TLSALPN01(serverName string) *tls.Certificate {
	m.chal.mu.RLock()
	defer m.chal.mu.RUnlock()
	return m.chal.alpn[serverName]
}
