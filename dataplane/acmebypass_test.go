package dataplane

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// acmeBackend is a TLS server speaking only acme-tls/1 with its own
// certificate (an ACME client behind a passthrough router); its address.
func acmeBackend(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"acme-tls/1"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

// Cases 047 and 052: on a resolver's HTTP-01 entrypoint every challenge
// path is Gantry's (404 for an unknown token, never the redirect);
// allowACMEByPass hands unknown tokens to the user's solver router (the
// redirect skips the path) while Gantry's own tokens still answer. An
// acme-tls/1 hello for a name Gantry is not validating reaches the
// passthrough router; one for a name it is validating gets Gantry's
// challenge certificate, unless the entrypoint sets allowACMEByPass.
func TestACMEHTTP01EntryPointAndByPass(t *testing.T) {
	solver := dptest.EchoBackend(t, "external-solver")
	chalPEM, chalKey := selfSigned(t, "app.example.com", "challenge.invalid")
	chal, err := tls.X509KeyPair([]byte(chalPEM), []byte(chalKey))
	if err != nil {
		t.Fatal(err)
	}
	innerPEM, innerKey := selfSigned(t, "inner-acme-client")
	inner, err := tls.X509KeyPair([]byte(innerPEM), []byte(innerKey))
	if err != nil {
		t.Fatal(err)
	}
	backend := acmeBackend(t, inner)
	fc := &fakeChallenges{
		http: map[string]string{"web app.example.com tok1": "tok1.thumb", "bypass app.example.com tok2": "tok2.thumb"},
		alpn: map[string]*tls.Certificate{"app.example.com": &chal},
	}
	redirect := &static.EntryHTTP{Redirections: &static.Redirections{EntryPoint: &static.RedirectEntryPoint{To: "websecure"}}}
	eps := map[string]*static.EntryPoint{
		"web":          {Address: "127.0.0.1:0", HTTP: redirect},
		"bypass":       {Address: "127.0.0.1:0", HTTP: redirect, AllowACMEByPass: true},
		"websecure":    {Address: "127.0.0.1:0"},
		"securebypass": {Address: "127.0.0.1:0", AllowACMEByPass: true},
	}
	h := newHarness(t, eps, nil, func(srv *Server) { srv.SetChallenges(fc, "web", "bypass") })
	t.Cleanup(dptest.CloseIdle)
	h.Apply(`
http:
  routers:
    solver@file:
      rule: PathPrefix(`+"`/.well-known/acme-challenge/`"+`)
      entryPoints: [web, bypass]
      service: solver@file
    app@file:
      rule: Host(`+"`front.example.com`"+`)
      entryPoints: [websecure, securebypass]
      service: solver@file
      tls: {}
  services:
    solver@file:
      loadBalancer:
        servers: [{url: "`+solver.URL+`"}]
tcp:
  routers:
    pt@file:
      rule: HostSNI(`+"`*`"+`)
      entryPoints: [websecure, securebypass]
      service: inner@file
      tls: {passthrough: true}
  services:
    inner@file:
      loadBalancer:
        servers: [{address: "`+backend+`"}]
`, generation.Options{Challenges: fc})

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct {
		ep, path string
		code     int
		body     string
	}{
		{"web", "/.well-known/acme-challenge/tok1", 200, "tok1.thumb"},
		{"web", "/.well-known/acme-challenge/unknown", 404, ""},
		{"web", "/.well-known/acme-challenge/tok2", 404, ""}, // another entrypoint's token
		{"web", "/", 301, ""},
		{"bypass", "/.well-known/acme-challenge/tok2", 200, "tok2.thumb"},
		{"bypass", "/.well-known/acme-challenge/unknown", 200, "external-solver"},
		{"bypass", "/", 301, ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+h.Addr(tt.ep)+tt.path, nil)
		req.Host = "app.example.com"
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code || (tt.body != "" && !strings.Contains(string(b), tt.body)) {
			t.Errorf("%s %s: %d %q, want %d %q", tt.ep, tt.path, resp.StatusCode, b, tt.code, tt.body)
		}
	}

	served := func(ep, sni string) string {
		t.Helper()
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", h.Addr(ep), &tls.Config{ServerName: sni, InsecureSkipVerify: true, NextProtos: []string{"acme-tls/1"}}) //nolint:gosec // test
		if err != nil {
			t.Fatalf("%s acme-tls/1 for %s: %v", ep, sni, err)
		}
		defer c.Close()
		st := c.ConnectionState()
		if st.NegotiatedProtocol != "acme-tls/1" {
			t.Errorf("%s acme-tls/1 for %s: negotiated %q", ep, sni, st.NegotiatedProtocol)
		}
		return st.PeerCertificates[0].DNSNames[0]
	}
	for _, tt := range []struct{ ep, sni, want string }{
		{"websecure", "inner.example.com", "inner-acme-client"}, // not Gantry's challenge: passed through
		{"websecure", "app.example.com", "app.example.com"},     // Gantry's own challenge
		{"securebypass", "app.example.com", "inner-acme-client"},
		{"securebypass", "inner.example.com", "inner-acme-client"},
	} {
		if got := served(tt.ep, tt.sni); got != tt.want {
			t.Errorf("%s acme-tls/1 for %s: certificate %s, want %s", tt.ep, tt.sni, got, tt.want)
		}
	}
}
