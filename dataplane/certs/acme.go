package certs

import (
	"crypto/tls"
	"net"
	"net/http"
	"slices"
	"strings"
)

// Challenges answers ACME challenges ahead of routing: HTTP-01 (RFC 8555
// §8.3) on the entrypoints it names and TLS-ALPN-01 (RFC 8737) on every
// TLS handshake that offers only the "acme-tls/1" protocol. providers/acme
// implements it. Both methods are called on the request path, only for
// challenge paths and acme-tls/1 handshakes: they must be safe for
// concurrent use and wait at most a short, bounded time (providers/acme
// asks a shared store for challenges another instance published).
type Challenges interface {
	// HTTP01 returns the key authorization to answer for token when a
	// challenge for host (lower-case, no port) is pending on entryPoint.
	HTTP01(entryPoint, host, token string) (keyAuth string, ok bool)
	// TLSALPN01 returns the validation certificate for serverName
	// (lower-case), or nil when no TLS-ALPN-01 challenge is pending for it.
	TLSALPN01(serverName string) *tls.Certificate
}

// ACMEChallengePath is where HTTP-01 tokens are fetched (RFC 8555 §8.3).
const ACMEChallengePath = "/.well-known/acme-challenge/"

// acmeTLSALPN is the ALPN protocol of TLS-ALPN-01 (RFC 8737 §6.2).
const acmeTLSALPN = "acme-tls/1"

// AnswerHTTP01 answers r when it fetches a pending HTTP-01 token of c on
// entryPoint, and reports whether it did. Any other request (another path,
// an unknown token) is left alone, to go on to routing unchanged.
func AnswerHTTP01(c Challenges, entryPoint string, w http.ResponseWriter, r *http.Request) bool {
	token, ok := strings.CutPrefix(r.URL.Path, ACMEChallengePath)
	if !ok || token == "" || strings.Contains(token, "/") {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	keyAuth, ok := c.HTTP01(entryPoint, strings.ToLower(host), token)
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(keyAuth))
	return true
}

// acmePolicy returns the TLS configuration of a TLS-ALPN-01 validation
// handshake: only acme-tls/1 is negotiated (RFC 8737 §3).
func acmePolicy(conn ConnOf) *Policy {
	return &Policy{minVersion: tls.VersionTLS12, alpn: []string{acmeTLSALPN}, conn: conn}
}

// challengeCert returns the TLS-ALPN-01 validation certificate when hello
// asks for acme-tls/1 and a challenge for its server name is pending.
func challengeCert(c Challenges, hello *tls.ClientHelloInfo) *tls.Certificate {
	if c == nil || !slices.Contains(hello.SupportedProtos, acmeTLSALPN) {
		return nil
	}
	return c.TLSALPN01(strings.ToLower(strings.TrimSuffix(hello.ServerName, ".")))
}
