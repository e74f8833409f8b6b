package acme

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"strings"
	"sync"
	"time"

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
	Domain     string `json:"domain"`
	KeyAuth    string `json:"keyAuth"`
	EntryPoint string `json:"entryPoint,omitempty"`
}

// Shared challenge answers: bucket in the shared store, the bound on
// concurrent lookups from the request path, and each lookup's timeout.
const (
	chalBucket    = "challenges"
	maxLookups    = 4
	lookupTimeout = 2 * time.Second
)

func newChallenges() *challenges {
	return &challenges{http: map[string]httpToken{}, alpn: map[string]*tls.Certificate{}}
}

// http01Provider is a lego challenge.Provider publishing tokens for
// entryPoint, also in shared (when set) so that any instance can answer.
type http01Provider struct {
	c          *challenges
	entryPoint string
	shared     sharedKV
}

func (p http01Provider) Present(ctx context.Context, domain, token, keyAuth string) error {
	t := httpToken{Domain: strings.ToLower(domain), KeyAuth: keyAuth, EntryPoint: p.entryPoint}
	return publish(ctx, p.c, p.c.http, token, t, p.shared, "http-"+token, t)
}

func (p http01Provider) CleanUp(ctx context.Context, _, token, _ string) error {
	return withdraw(ctx, p.c, p.c.http, token, p.shared, "http-"+token)
}

// tlsALPN01 is a lego challenge.Provider publishing validation
// certificates (RFC 8737 §3), and their key authorizations in shared.
type tlsALPN01 struct {
	c      *challenges
	shared sharedKV
}

func (p tlsALPN01) Present(ctx context.Context, domain, _, keyAuth string) error {
	cert, err := tlsalpn01.ChallengeCert(domain, keyAuth)
	if err != nil {
		return err
	}
	d := strings.ToLower(domain)
	return publish(ctx, p.c, p.c.alpn, d, cert, p.shared, "alpn-"+d, httpToken{Domain: d, KeyAuth: keyAuth})
}

func (p tlsALPN01) CleanUp(ctx context.Context, domain, _, _ string) error {
	d := strings.ToLower(domain)
	return withdraw(ctx, p.c, p.c.alpn, d, p.shared, "alpn-"+d)
}

// publish makes this instance answer a challenge: v under key in local
// (one of c's maps, guarded by c.mu) and, when shared is set, answer
// (JSON) under sharedKey in the shared store, so that any instance
// answers it.
func publish[V any](ctx context.Context, c *challenges, local map[string]V, key string, v V, shared sharedKV, sharedKey string, answer any) error {
	c.mu.Lock()
	local[key] = v
	c.mu.Unlock()
	if shared != nil {
		b, _ := json.Marshal(answer)
		return shared.Put(ctx, chalBucket, sharedKey, b)
	}
	return nil
}

// withdraw undoes publish once the challenge is over.
func withdraw[V any](ctx context.Context, c *challenges, local map[string]V, key string, shared sharedKV, sharedKey string) error {
	c.mu.Lock()
	delete(local, key)
	c.mu.Unlock()
	if shared != nil {
		return shared.Delete(ctx, chalBucket, sharedKey)
	}
	return nil
}

// sharedChallenges returns the shared store r publishes challenge answers
// to, or nil.
func (m *Manager) sharedChallenges(r *resolver) sharedKV {
	cs, _ := r.kv.(sharedKV)
	return cs
}

// lookup reads a challenge answer another instance published, bounded in
// concurrency (a busy lookup answers "none") and time.
func (m *Manager) lookup(key string) (httpToken, bool) {
	if len(m.shared) == 0 {
		return httpToken{}, false
	}
	select {
	case m.lookups <- struct{}{}:
		defer func() { <-m.lookups }()
	default:
		return httpToken{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	for _, s := range m.shared {
		b, err := s.Get(ctx, chalBucket, key)
		if err != nil || b == nil {
			continue
		}
		var t httpToken
		if json.Unmarshal(b, &t) == nil {
			return t, true
		}
	}
	return httpToken{}, false
}

// HTTP01 implements dataplane/certs.Challenges: the key authorization for token
// when its challenge is for host on entryPoint.
func (m *Manager) HTTP01(entryPoint, host, token string) (string, bool) {
	m.chal.mu.RLock()
	t, ok := m.chal.http[token]
	m.chal.mu.RUnlock()
	if !ok && validToken(token) {
		t, ok = m.lookup("http-" + token) // ordered by another instance
	}
	if !ok || t.Domain != host || t.EntryPoint != entryPoint {
		return "", false
	}
	return t.KeyAuth, true
}

// validToken reports whether token can be an ACME token (base64url, RFC
// 8555 §8.1), so junk paths never reach the shared store.
func validToken(token string) bool {
	if len(token) < 16 || len(token) > 128 {
		return false
	}
	for _, c := range token {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// TLSALPN01 implements dataplane/certs.Challenges. A challenge published by
// another instance sharing the store is answered too.
func (m *Manager) TLSALPN01(serverName string) *tls.Certificate {
	m.chal.mu.RLock()
	c := m.chal.alpn[serverName]
	m.chal.mu.RUnlock()
	if c != nil || len(m.shared) == 0 || serverName == "" || len(serverName) > 253 {
		return c
	}
	t, ok := m.lookup("alpn-" + serverName)
	if !ok {
		return nil
	}
	// Not cached: the next challenge for the name has another key
	// authorization. Lookups are bounded (maxLookups), so is this cost.
	c, err := tlsalpn01.ChallengeCert(serverName, t.KeyAuth)
	if err != nil {
		return nil
	}
	return c
}
