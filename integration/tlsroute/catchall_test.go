package tlsroute

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// tlsBackend is a TLS server with its own certificate (name) offering
// protos, answering HTTP with body; its address.
func tlsBackend(t *testing.T, name, body string, protos ...string) string {
	t.Helper()
	p := newPKI(t, name)
	cert, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) }))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: append(protos, "http/1.1")}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

// peer dials addr with TLS (SNI sni, "" for none, offering protos) and
// returns the first DNS name of the certificate presented, or the error.
func peer(addr, sni string, protos ...string) (string, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, &tls.Config{ServerName: sni, InsecureSkipVerify: true, NextProtos: protos}) //nolint:gosec // the test reads the certificate
	if err != nil {
		return "", err
	}
	defer c.Close()
	leaf := c.ConnectionState().PeerCertificates[0]
	if len(leaf.DNSNames) > 0 {
		return leaf.DNSNames[0], nil
	}
	return leaf.Subject.CommonName, nil
}

// Cases 045 and 052 through the binary: a TCP HostSNI(`*`) passthrough
// router beside HTTPS routers that all name hosts receives every unknown
// or missing SNI, the HTTPS routers keep theirs (any case); with no
// resolver using tlsChallenge an acme-tls/1 hello reaches the passthrough
// router; allowACMEByPass is accepted. Shadowed routers are warnings in
// /api/problems naming both sides.
func TestTCPCatchAllBesideHTTPS(t *testing.T) {
	p := newPKI(t)
	w := harness.StartWhoami(t, "catchall")
	legacy := tlsBackend(t, "legacy.backend", "legacy", "acme-tls/1")
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(`
http:
  routers:
    app:  {rule: "Host(`+"`app.example.com`"+`)", entryPoints: [websecure], tls: {}, service: s}
    chat: {rule: "Host(`+"`chat.example.com`"+`)", entryPoints: [websecure], tls: {}, service: s}
    legacyweb: {rule: "Host(`+"`app.example.com`"+`)", entryPoints: [plain], service: s}
  services:
    s: {loadBalancer: {servers: [{url: "http://%s"}]}}
tcp:
  routers:
    rest: {rule: "HostSNI(`+"`*`"+`)", entryPoints: [websecure], tls: {passthrough: true}, service: legacy}
    xmpp: {rule: "HostSNI(`+"`chat.example.com`"+`) && ALPN(`+"`xmpp-client`"+`)", entryPoints: [websecure], tls: {passthrough: true}, service: legacy}
    smtp: {rule: "HostSNI(`+"`*`"+`)", entryPoints: [plain], service: legacy}
    mongo: {rule: "HostSNI(`+"`mongo.example.com`"+`)", entryPoints: [mongo], service: legacy}
  services:
    legacy: {loadBalancer: {servers: [{address: %q}]}}
tls:
  certificates:
    - {certFile: %q, keyFile: %q}
`, w, legacy, p.serverCert, p.serverKey))
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  websecure: {address: %q, allowACMEByPass: true}
  plain: {address: %q}
  mongo: {address: %q}
  traefik: {address: %q}
api: {insecure: true}
providers: {file: {directory: %q}}
`, harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t), dyn))
	g.WaitOutput(t, wait, "config applied")
	if strings.Contains(g.Output(), "allowACMEByPass") {
		t.Errorf("allowACMEByPass reported:\n%s", g.Output())
	}
	addr := g.EntryPoints["websecure"]
	for _, c := range []struct {
		sni    string
		protos []string
		want   string
	}{
		{"unknown.example.net", nil, "legacy.backend"},
		{"", nil, "legacy.backend"},
		{"app.example.com", nil, "*.example.com"},
		{"APP.Example.com", nil, "*.example.com"},
		{"inner.example.com", []string{"acme-tls/1"}, "legacy.backend"},
	} {
		if got, err := peer(addr, c.sni, c.protos...); err != nil || got != c.want {
			t.Errorf("SNI %q ALPN %v: certificate %q (%v), want %q", c.sni, c.protos, got, err, c.want)
		}
	}
	var probs []problem
	apiJSON(t, g.EntryPoints["traefik"], "/api/problems", &probs)
	all := fmt.Sprintf("%+v", probs)
	for _, want := range []string{
		"HTTPS router chat@file serves the same host (chat.example.com)",
		"so TCP router xmpp@file never receives one",
		"HostSNI(`mongo.example.com`) never matches",
		"its HTTP routers never receive a request: legacyweb@file",
		"TCP router smtp@file (HostSNI(`*`), no TLS) takes every connection there",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("/api/problems lacks %q:\n%s", want, all)
		}
	}
}
