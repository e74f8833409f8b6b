package e2e

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
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// writeCert writes a self-signed ECDSA certificate for host (serial as
// given) into dir and returns the certificate and key file paths.
func writeCert(t *testing.T, dir, host string, serial int64) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = filepath.Join(dir, fmt.Sprintf("%s-%d.crt", host, serial))
	keyFile = filepath.Join(dir, fmt.Sprintf("%s-%d.key", host, serial))
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

const tlsDynamic = `
http:
  routers:
    a:     {rule: "Host(` + "`a.test`" + `)", service: s, entryPoints: [websecure], tls: {}}
    b:     {rule: "Host(` + "`b.test`" + `)", service: s, entryPoints: [websecure], tls: {}}
    plain: {rule: "Host(` + "`plain.test`" + `)", service: s, entryPoints: [web]}
  services:
    s:
      loadBalancer:
        servers: [{url: "http://%s"}]
tls:
  certificates:
    - {certFile: %q, keyFile: %q}
    - {certFile: %q, keyFile: %q}
`

// tlsClient connects every request to addr and records the certificate the
// server presented.
type tlsClient struct {
	*http.Client
	leaf *x509.Certificate
}

func newTLSClient(addr, serverName string) *tlsClient {
	c := &tlsClient{}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		},
		TLSClientConfig: &tls.Config{
			ServerName:         serverName,
			InsecureSkipVerify: true, // self-signed; the test checks the leaf itself
			VerifyConnection: func(cs tls.ConnectionState) error {
				c.leaf = cs.PeerCertificates[0]
				return nil
			},
		},
		ForceAttemptHTTP2: true,
	}
	c.Client = &http.Client{Transport: tr, Timeout: 10 * time.Second}
	return c
}

// TLS on an entrypoint: two certificates chosen by SNI, a generated default
// certificate for other names, HTTP/2 by ALPN, TLS routers only on the TLS
// entrypoint, and a certificate change applied without a restart while an
// open HTTP/2 connection keeps working.
func TestTLSBySNIAndHTTP2(t *testing.T) {
	w := harness.StartWhoami(t, "tls")
	dir := t.TempDir()
	aCert, aKey := writeCert(t, dir, "a.test", 1)
	bCert, bKey := writeCert(t, dir, "b.test", 2)
	p := startProxy(t, map[string]string{"web": "", "websecure": ""}, "",
		fmt.Sprintf(tlsDynamic, w, aCert, aKey, bCert, bKey))
	secure := p.EntryPoints["websecure"]

	clients := map[string]*tlsClient{}
	for _, tt := range []struct {
		host   string
		serial int64
	}{{"a.test", 1}, {"b.test", 2}} {
		c := newTLSClient(secure, tt.host)
		clients[tt.host] = c
		resp, err := c.Get("https://" + tt.host + "/x")
		if err != nil {
			t.Fatalf("%s: %v", tt.host, err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
			t.Errorf("%s: got %d over %s, want 200 over HTTP/2", tt.host, resp.StatusCode, resp.Proto)
		}
		if e := parseEcho(body); e.name != "tls" {
			t.Errorf("%s: answered by %q", tt.host, e.name)
		}
		if !slices.Contains(c.leaf.DNSNames, tt.host) || c.leaf.SerialNumber.Int64() != tt.serial {
			t.Errorf("%s: server presented %v serial %v", tt.host, c.leaf.DNSNames, c.leaf.SerialNumber)
		}
	}

	// An unknown name gets the generated default certificate (ECDSA P-256).
	c := newTLSClient(secure, "unknown.test")
	resp, err := c.Get("https://unknown.test/")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.StatusCode != 404 {
		t.Errorf("unknown host: got %d, want 404", resp.StatusCode)
	}
	if slices.Contains(c.leaf.DNSNames, "a.test") || slices.Contains(c.leaf.DNSNames, "b.test") {
		t.Errorf("unknown SNI got a configured certificate %v", c.leaf.DNSNames)
	}
	if pk, ok := c.leaf.PublicKey.(*ecdsa.PublicKey); !ok || pk.Curve != elliptic.P256() {
		t.Errorf("default certificate key: %T, want ECDSA P-256", c.leaf.PublicKey)
	}

	// TLS routers are not served on the plain entrypoint, plain ones are.
	if r := get(t, p.URL(t, "web", "/"), harness.Host("a.test")); r.StatusCode != 404 {
		t.Errorf("TLS router on the plain entrypoint: got %d, want 404", r.StatusCode)
	}
	if r := get(t, p.URL(t, "web", "/"), harness.Host("plain.test")); r.StatusCode != 200 {
		t.Errorf("plain router: got %d, want 200", r.StatusCode)
	}

	// Rotate a.test's certificate: new handshakes get it, the open HTTP/2
	// connection of the first client keeps serving.
	a3Cert, a3Key := writeCert(t, dir, "a.test", 3)
	p.update(t, fmt.Sprintf(tlsDynamic, w, a3Cert, a3Key, bCert, bKey))
	resp, err = clients["a.test"].Get("https://a.test/after-rotation")
	if err != nil {
		t.Fatalf("open connection after rotation: %v", err)
	}
	readAll(t, resp)
	if resp.StatusCode != 200 {
		t.Errorf("open connection after rotation: %d", resp.StatusCode)
	}
	fresh := newTLSClient(secure, "a.test")
	resp, err = fresh.Get("https://a.test/")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if got := fresh.leaf.SerialNumber.Int64(); got != 3 {
		t.Errorf("new handshake after rotation: serial %d, want 3", got)
	}
}

// http.redirections.entryPoint: every request on the plain entrypoint is
// redirected to the same host and URI on websecure's port, 301 for GET and
// 308 for other methods (the method and body are kept).
func TestEntryPointRedirect(t *testing.T) {
	w := harness.StartWhoami(t, "redir")
	dir := t.TempDir()
	aCert, aKey := writeCert(t, dir, "a.test", 1)
	bCert, bKey := writeCert(t, dir, "b.test", 2)
	p := startProxy(t, map[string]string{"redir": "", "websecure": ""}, "",
		fmt.Sprintf(tlsDynamic, w, aCert, aKey, bCert, bKey))
	_, port, _ := net.SplitHostPort(p.EntryPoints["websecure"])
	want := "https://a.test:" + port + "/x?y=1"
	for method, code := range map[string]int{http.MethodGet: 301, http.MethodPost: 308} {
		r := get(t, p.URL(t, "redir", "/x?y=1"), harness.Host("a.test"), harness.Method(method))
		if r.StatusCode != code || r.Header.Get("Location") != want {
			t.Errorf("%s: got %d Location %q, want %d %q", method, r.StatusCode, r.Header.Get("Location"), code, want)
		}
	}
	// Following it lands on the TLS router.
	c := newTLSClient(p.EntryPoints["websecure"], "a.test")
	resp, err := c.Get(want)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != 200 || parseEcho(body).requestLine != "GET /x?y=1 HTTP/1.1" {
		t.Errorf("after the redirect: %d %q", resp.StatusCode, parseEcho(body).requestLine)
	}
}
