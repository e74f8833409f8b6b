package dataplane

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// selfSigned returns PEM certificate and key for names (CN = names[0]).
func selfSigned(t testing.TB, names ...string) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
}

func yamlQuote(s string) string { return fmt.Sprintf("%q", s) }

// TLS on an entrypoint: certificates by SNI (exact and wildcard), the
// generated ECDSA P-256 default for unknown names, HTTP/2 by ALPN, TLS and
// plain HTTP on one port with tls routers served only over TLS, and a
// certificate change picked up without a restart while an open connection
// keeps working. An unreadable certificate disables only itself.
func TestTLSBySNIAndHotSwap(t *testing.T) {
	be := dptest.EchoBackend(t, "secure")
	plainBE := dptest.EchoBackend(t, "plain")
	dir := t.TempDir()
	aCert, aKey := selfSigned(t, "a.test")
	os.WriteFile(filepath.Join(dir, "a.crt"), []byte(aCert), 0o600)
	os.WriteFile(filepath.Join(dir, "a.key"), []byte(aKey), 0o600)
	wCert, wKey := selfSigned(t, "*.b.test")
	h := newHarness(t, nil, nil)
	cfg := func(certs string) string {
		return fmt.Sprintf(`
http:
  routers:
    secure@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file, tls: {}}
    plain@file: {rule: "PathPrefix(`+"`/`"+`)", service: p@file}
  services:
    s@file: {loadBalancer: {servers: [{url: %q}]}}
    p@file: {loadBalancer: {servers: [{url: %q}]}}
tls:
  certificates:
%s`, be.URL, plainBE.URL, certs)
	}
	certs := fmt.Sprintf(`    - {certFile: %q, keyFile: %q}
    - {certFile: %s, keyFile: %s}
    - {certFile: /nonexistent/c.crt, keyFile: /nonexistent/c.key}
`, filepath.Join(dir, "a.crt"), filepath.Join(dir, "a.key"), yamlQuote(wCert), yamlQuote(wKey))
	h.Apply(cfg(certs), generation.Options{})
	addr := h.Addr("web")
	for _, tt := range []struct{ sni, wantCN string }{
		{"a.test", "a.test"},
		{"x.b.test", "*.b.test"},
		{"unknown.test", "GANTRY DEFAULT CERT"},
		{"", "GANTRY DEFAULT CERT"},
	} {
		c := tlsDial(t, addr, tt.sni, "h2", "http/1.1")
		st := c.ConnectionState()
		leaf := st.PeerCertificates[0]
		if leaf.Subject.CommonName != tt.wantCN {
			t.Errorf("SNI %q: got certificate %q, want %q", tt.sni, leaf.Subject.CommonName, tt.wantCN)
		}
		if tt.wantCN == "GANTRY DEFAULT CERT" {
			if k, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
				t.Errorf("default certificate key is %T, want ECDSA P-256", leaf.PublicKey)
			}
		}
		if st.NegotiatedProtocol != "h2" {
			t.Errorf("SNI %q: ALPN %q, want h2", tt.sni, st.NegotiatedProtocol)
		}
		c.Close()
	}

	// HTTP/2 over TLS reaches the tls router; plain HTTP on the same port
	// reaches the other one.
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true, ServerName: "a.test"}, //nolint:gosec // test
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		},
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	get := func(u string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	_, port, _ := net.SplitHostPort(addr)
	resp, body := get("https://a.test:" + port + "/")
	if resp.ProtoMajor != 2 || dptest.EchoHeader(body, "Name") != "secure" || dptest.EchoHeader(body, "X-Forwarded-Proto") != "https" {
		t.Errorf("TLS request: proto %s, body %q; want HTTP/2 to the tls router with X-Forwarded-Proto https", resp.Proto, dptest.FirstLines(body, 1))
	}
	resp2, body2 := get("http://" + addr + "/")
	if dptest.EchoHeader(body2, "Name") != "plain" || resp2.ProtoMajor != 1 {
		t.Errorf("plain request on the TLS port: %s %q, want HTTP/1.1 to the plain router", resp2.Proto, dptest.FirstLines(body2, 1))
	}

	// Certificate change without restart: the open HTTP/2 connection keeps
	// serving, new handshakes get the new certificate.
	a2Cert, a2Key := selfSigned(t, "a.test", "renewed.a.test")
	h.Apply(cfg(fmt.Sprintf("    - {certFile: %s, keyFile: %s}\n", yamlQuote(a2Cert), yamlQuote(a2Key))), generation.Options{})
	if _, body := get("https://a.test:" + port + "/again"); dptest.EchoHeader(body, "Name") != "secure" {
		t.Errorf("open connection after the certificate change: %q", dptest.FirstLines(body, 1))
	}
	c := tlsDial(t, addr, "a.test")
	if sans := c.ConnectionState().PeerCertificates[0].DNSNames; !strings.Contains(strings.Join(sans, ","), "renewed.a.test") {
		t.Errorf("after the change SNI a.test got SANs %v, want the renewed certificate", sans)
	}
	c.Close()
}

func TestBuildTLSErrorsNameTheFile(t *testing.T) {
	h := newHarness(t, nil, nil)
	c, _ := decodeYAML(t, `
tls:
  certificates:
    - {certFile: /nonexistent/c.crt, keyFile: /nonexistent/c.key}
  options:
    bad: {minVersion: VersionTLS99}
`)
	g := generation.New(h.Pool, c, generation.Options{})
	defer g.Close()
	get, errs := g.BuildTLS(t.Context(), c.Config.TLS, nil)
	if len(errs) != 2 || !strings.Contains(errs[0].Error()+errs[1].Error(), "/nonexistent/c.crt") || !strings.Contains(errs[0].Error()+errs[1].Error(), "tls.options.bad") {
		t.Errorf("errors = %v, want one naming /nonexistent/c.crt and one naming tls.options.bad", errs)
	}
	cert, err := get(&tls.ClientHelloInfo{ServerName: "x"})
	if err != nil || cert == nil || cert.Leaf.Subject.CommonName != "GANTRY DEFAULT CERT" {
		t.Errorf("fallback certificate = %v, %v; want the generated default", cert, err)
	}
}

// TLS options apply per SNI name: the options named by the routers of that
// host, else tls.options.default; an unknown options name disables the
// router that names it.
func TestTLSOptionsPerHost(t *testing.T) {
	be := dptest.EchoBackend(t, "s")
	aCert, aKey := selfSigned(t, "a.test", "b.test")
	h := newHarness(t, nil, nil)
	tbl := h.Apply(fmt.Sprintf(`
http:
  routers:
    a@file: {rule: "Host(`+"`a.test`"+`)", service: s@file, tls: {options: modern@file}}
    b@file: {rule: "Host(`+"`b.test`"+`)", service: s@file, tls: {}}
    c@file: {rule: "Host(`+"`c.test`"+`)", service: s@file, tls: {options: missing@file}}
  services:
    s@file: {loadBalancer: {servers: [{url: %q}]}}
tls:
  certificates: [{certFile: %s, keyFile: %s}]
  options:
    modern@file: {minVersion: VersionTLS13, alpnProtocols: [http/1.1]}
    default: {maxVersion: VersionTLS12, sniStrict: true}
`, be.URL, yamlQuote(aCert), yamlQuote(aKey)), generation.Options{})
	if st := tbl.Report().Routers["c@file"]; st == nil || st.Status != "disabled" || !strings.Contains(strings.Join(st.Errors, ";"), `tls.options "missing@file" does not exist`) {
		t.Errorf("router with unknown options: %+v", st)
	}
	addr := h.Addr("web")
	dial := func(sni string, maxV uint16) (*tls.Conn, error) {
		return tls.Dial("tcp", addr, &tls.Config{ServerName: sni, InsecureSkipVerify: true, MaxVersion: maxV, NextProtos: []string{"h2", "http/1.1"}}) //nolint:gosec // test
	}
	if c, err := dial("a.test", tls.VersionTLS12); err == nil {
		c.Close()
		t.Error("a.test accepted TLS 1.2; its options require 1.3")
	}
	c, err := dial("a.test", 0)
	if err != nil {
		t.Fatalf("a.test with TLS 1.3: %v", err)
	}
	if st := c.ConnectionState(); st.Version != tls.VersionTLS13 || st.NegotiatedProtocol != "http/1.1" {
		t.Errorf("a.test: version %x ALPN %q, want TLS 1.3 and http/1.1", st.Version, st.NegotiatedProtocol)
	}
	c.Close()
	// b.test uses the default options: at most TLS 1.2; sniStrict refuses
	// names without a certificate.
	c, err = dial("b.test", 0)
	if err != nil {
		t.Fatalf("b.test: %v", err)
	}
	if v := c.ConnectionState().Version; v != tls.VersionTLS12 {
		t.Errorf("b.test negotiated %x, want TLS 1.2 (default options maxVersion)", v)
	}
	c.Close()
	if c, err := dial("unknown.test", 0); err == nil {
		c.Close()
		t.Error("sniStrict default options: unknown.test without a certificate was served")
	}
}

// Session tickets stay valid within a generation, so clients resume.
func TestTLSSessionResumption(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.Apply(`http: {}`, generation.Options{})
	cfg := &tls.Config{InsecureSkipVerify: true, ServerName: "x.test", ClientSessionCache: tls.NewLRUClientSessionCache(4), MaxVersion: tls.VersionTLS12} //nolint:gosec // test
	for i, want := range []bool{false, true} {
		c, err := tls.Dial("tcp", h.Addr("web"), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.ConnectionState().DidResume; got != want {
			t.Errorf("handshake %d: resumed %v, want %v", i, got, want)
		}
		c.Close()
	}
}
