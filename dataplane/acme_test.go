package dataplane

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// fakeChallenges is a fixed set of pending challenges.
type fakeChallenges struct {
	mu    sync.Mutex
	http  map[string]string // entryPoint+" "+host+" "+token -> keyAuth
	alpn  map[string]*tls.Certificate
	calls int
}

func (f *fakeChallenges) HTTP01(ep, host, token string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	k, ok := f.http[ep+" "+host+" "+token]
	return k, ok
}

func (f *fakeChallenges) TLSALPN01(name string) *tls.Certificate {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.alpn[name]
}

// HTTP-01 tokens are answered on their entrypoint ahead of the entrypoint
// redirection and of a user router matching the same path; other tokens,
// other hosts and other entrypoints go on to the redirection or routing.
// A TLS-ALPN-01 handshake gets the challenge certificate with only
// acme-tls/1 negotiated, while an ordinary handshake for the same name gets
// the ordinary certificate.
func TestACMEChallengesAheadOfRouting(t *testing.T) {
	be := dptest.EchoBackend(t, "user-router")
	certPEM, keyPEM := selfSigned(t, "app.example.com")
	chalPEM, chalKey := selfSigned(t, "app.example.com", "challenge.invalid")
	chal, err := tls.X509KeyPair([]byte(chalPEM), []byte(chalKey))
	if err != nil {
		t.Fatal(err)
	}
	fc := &fakeChallenges{
		http: map[string]string{"web app.example.com tok1": "tok1.thumb"},
		alpn: map[string]*tls.Certificate{"app.example.com": &chal},
	}
	eps := map[string]*static.EntryPoint{
		"web":       {Address: "127.0.0.1:0", HTTP: &static.EntryHTTP{Redirections: &static.Redirections{EntryPoint: &static.RedirectEntryPoint{To: "websecure"}}}},
		"other":     {Address: "127.0.0.1:0"},
		"websecure": {Address: "127.0.0.1:0"},
	}
	h := newHarness(t, eps, nil, func(srv *Server) { srv.SetChallenges(fc) })
	t.Cleanup(dptest.CloseIdle)
	h.Apply(`
http:
  routers:
    wellknown@file:
      rule: PathPrefix(`+"`/.well-known/`"+`)
      entryPoints: [other, websecure]
      service: be@file
    secure@file:
      rule: Host(`+"`app.example.com`"+`)
      entryPoints: [websecure]
      service: be@file
      tls: {}
  services:
    be@file:
      loadBalancer:
        servers: [{url: "`+be.URL+`"}]
tls:
  certificates:
    - certFile: `+yamlQuote(certPEM)+`
      keyFile: `+yamlQuote(keyPEM)+`
`, generation.Options{Challenges: fc})

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(ep, host, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+h.Addr(ep)+path, nil)
		req.Host = host
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tt := range []struct {
		ep, host, path string
		code           int
		body           string
	}{
		{"web", "app.example.com", "/.well-known/acme-challenge/tok1", 200, "tok1.thumb"},
		{"web", "APP.example.com:80", "/.well-known/acme-challenge/tok1", 200, "tok1.thumb"},
		{"web", "app.example.com", "/.well-known/acme-challenge/other", 301, ""},
		{"web", "else.example.com", "/.well-known/acme-challenge/tok1", 301, ""},
		{"web", "app.example.com", "/.well-known/acme-challenge/tok1/x", 301, ""},
		{"other", "app.example.com", "/.well-known/acme-challenge/tok1", 200, "user-router"},
	} {
		code, body := get(tt.ep, tt.host, tt.path)
		if code != tt.code || (tt.body != "" && !strings.Contains(body, tt.body)) {
			t.Errorf("%s %s%s: got %d %q, want %d %q", tt.ep, tt.host, tt.path, code, body, tt.code, tt.body)
		}
	}

	c := tlsDial(t, h.Addr("websecure"), "app.example.com", "acme-tls/1")
	st := c.ConnectionState()
	c.Close()
	if st.NegotiatedProtocol != "acme-tls/1" || !sameDER(st.PeerCertificates[0], chal.Certificate[0]) {
		t.Errorf("acme-tls/1 handshake: protocol %q, served %v; want acme-tls/1 and the challenge certificate", st.NegotiatedProtocol, st.PeerCertificates[0].DNSNames)
	}
	c = tlsDial(t, h.Addr("websecure"), "app.example.com", "h2", "http/1.1")
	st = c.ConnectionState()
	c.Close()
	if sameDER(st.PeerCertificates[0], chal.Certificate[0]) || st.NegotiatedProtocol == "acme-tls/1" {
		t.Errorf("ordinary handshake got the challenge certificate (protocol %q)", st.NegotiatedProtocol)
	}
	// No challenge pending for the name: acme-tls/1 is not spoken, so a
	// client offering only it is refused (no common protocol).
	if c, err := tls.Dial("tcp", h.Addr("websecure"), &tls.Config{ServerName: "other.example.com", InsecureSkipVerify: true, NextProtos: []string{"acme-tls/1"}}); err == nil { //nolint:gosec // test
		p := c.ConnectionState().NegotiatedProtocol
		c.Close()
		t.Errorf("acme-tls/1 handshake for a name without a pending challenge succeeded (protocol %q)", p)
	}
}

func sameDER(c *x509.Certificate, der []byte) bool { return string(c.Raw) == string(der) }

// tls.stores.default.defaultGeneratedCert: once the resolver's certificate
// for the domain is among the certificates, it is the default (served to a
// hello without a known name); before that the generated one serves.
func TestDefaultGeneratedCertFromResolver(t *testing.T) {
	h := newHarness(t, nil, nil)
	store := `
  stores:
    default:
      defaultGeneratedCert:
        resolver: le
        domain: {main: default.example.com, sans: [www.default.example.com]}
`
	h.Apply("tls:"+store, generation.Options{})
	name := func() string {
		c := tlsDial(t, h.Addr("web"), "unknown.example.org")
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if got := name(); got != "GANTRY DEFAULT CERT" {
		t.Errorf("before the resolver's certificate: default %q, want the generated one", got)
	}
	certPEM, keyPEM := selfSigned(t, "default.example.com", "www.default.example.com")
	h.Apply(`
tls:
  certificates:
    - certFile: `+yamlQuote(certPEM)+`
      keyFile: `+yamlQuote(keyPEM)+store, generation.Options{})
	if got := name(); got != "default.example.com" {
		t.Errorf("with the resolver's certificate: default %q, want default.example.com", got)
	}
}
