package dataplane

import (
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

	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// clientCA returns a CA (PEM file path) and a client certificate it signed.
func clientCA(t *testing.T) (string, tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// HTTP/3 (entryPoints.<ep>.http3): a quic-go client gets the same answers
// as an HTTP/2 client from the same table; TLS responses on TCP advertise
// h3 with Alt-Svc (advertisedPort when set); a router whose TLS options
// require a client certificate refuses an HTTP/3 client without one and
// serves one with a valid one, as on TCP.
func TestHTTP3SameTableAndMTLS(t *testing.T) {
	be := dptest.EchoBackend(t, "s")
	cert, key := selfSigned(t, "a.test", "m.test")
	caFile, clientCert := clientCA(t)
	eps := map[string]*static.EntryPoint{"websecure": {Address: "127.0.0.1:0", HTTP3: &static.EntryHTTP3{}}}
	obs := &dptest.Recorder{}
	h := newHarness(t, eps, obs)
	tbl := h.Apply(fmt.Sprintf(`
http:
  routers:
    a@file: {rule: "Host(`+"`a.test`"+`)", service: s@file, tls: {}}
    m@file: {rule: "Host(`+"`m.test`"+`)", service: s@file, tls: {options: mtls@file}}
  services:
    s@file: {loadBalancer: {servers: [{url: %q}]}}
tls:
  certificates: [{certFile: %s, keyFile: %s}]
  options:
    mtls@file: {clientAuth: {caFiles: [%q], clientAuthType: RequireAndVerifyClientCert}}
`, be.URL, yamlQuote(cert), yamlQuote(key), caFile), generation.Options{})
	for n, st := range tbl.Report().Routers {
		if st.Status != "enabled" {
			t.Fatalf("router %s: %+v", n, st)
		}
	}
	addr := h.Addr("websecure")
	_, port, _ := net.SplitHostPort(addr)
	h2c := &http.Client{Transport: &http2.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: "a.test"}, //nolint:gosec // self-signed test certificate
	}}
	h3 := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Transport: &http3.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: certs}, //nolint:gosec // self-signed test certificate
		}}
	}
	get := func(c *http.Client, host, path string) (*http.Response, string, error) {
		resp, err := c.Get("https://" + host + ":" + port + path)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b), nil
	}
	// The test names resolve to nothing: every request goes to addr, the
	// name kept as Host and SNI.
	h3plain := h3()
	h3plain.Transport.(*http3.Transport).TLSClientConfig.ServerName = "a.test"
	rewrite := func(c *http.Client) {
		c.Transport = hostRewriter{rt: c.Transport, addr: addr}
	}
	rewrite(h3plain)
	rewrite(h2c)

	r2, b2, err := get(h2c, "a.test", "/x?y=1")
	if err != nil {
		t.Fatal(err)
	}
	if r2.Proto != "HTTP/2.0" || r2.Header.Get("Alt-Svc") != fmt.Sprintf(`h3=":%s"; ma=2592000`, port) {
		t.Errorf("HTTP/2 answer: %s, Alt-Svc %q", r2.Proto, r2.Header.Get("Alt-Svc"))
	}
	r3, b3, err := get(h3plain, "a.test", "/x?y=1")
	if err != nil {
		t.Fatalf("HTTP/3 GET: %v", err)
	}
	if r3.Proto != "HTTP/3.0" || r3.StatusCode != 200 || dptest.EchoHeader(b3, "Name") != "s" || dptest.FirstLines(b3, 2) != dptest.FirstLines(b2, 2) {
		t.Errorf("HTTP/3 answer %s %d:\n%s\nwant as over HTTP/2:\n%s", r3.Proto, r3.StatusCode, dptest.FirstLines(b3, 3), dptest.FirstLines(b2, 3))
	}
	if r3.Header.Get("Alt-Svc") != "" {
		t.Errorf("HTTP/3 answer advertises Alt-Svc %q", r3.Header.Get("Alt-Svc"))
	}
	if r, _, err := get(h3plain, "a.test", "/nope-host"); err != nil || r.StatusCode != 200 {
		t.Errorf("second HTTP/3 request on the connection: %v", err)
	}

	// mTLS: no client certificate → the QUIC handshake fails.
	noCert := h3()
	noCert.Transport.(*http3.Transport).TLSClientConfig.ServerName = "m.test"
	rewrite(noCert)
	if r, _, err := get(noCert, "m.test", "/"); err == nil {
		t.Errorf("HTTP/3 without a client certificate to an mTLS router: %d, want a handshake failure", r.StatusCode)
	}
	withCert := h3(clientCert)
	withCert.Transport.(*http3.Transport).TLSClientConfig.ServerName = "m.test"
	rewrite(withCert)
	if r, b, err := get(withCert, "m.test", "/"); err != nil || r.StatusCode != 200 || dptest.EchoHeader(b, "Name") != "s" {
		t.Errorf("HTTP/3 with a client certificate: %v %v", r, err)
	}
	opened := obs.Conns("websecure/udp")
	if opened < 2 {
		t.Errorf("open QUIC connections counted: %d, want the two live clients'", opened)
	}
	for _, c := range []*http.Client{h3plain, noCert, withCert} {
		c.Transport.(hostRewriter).rt.(*http3.Transport).Close()
	}
	dptest.Eventually(t, "QUIC connections counted closed", func() bool {
		return obs.Conns("websecure/udp") == 0
	})
}

// hostRewriter sends every request to addr, keeping the URL host as the
// Host header and SNI.
type hostRewriter struct {
	rt   http.RoundTripper
	addr string
}

func (h hostRewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.Host = r.URL.Hostname()
	r2.URL.Host = h.addr
	return h.rt.RoundTrip(r2)
}

func TestHTTP3AdvertisedPort(t *testing.T) {
	if _, err := newH3(&static.EntryHTTP3{AdvertisedPort: 70000}); err == nil || !strings.Contains(err.Error(), "http3.advertisedPort") {
		t.Errorf("bad advertisedPort: %v", err)
	}
	eps := map[string]*static.EntryPoint{"websecure": {Address: "127.0.0.1:0", HTTP3: &static.EntryHTTP3{AdvertisedPort: 443}}}
	h := newHarness(t, eps, nil)
	if got := h.Srv.eps["websecure"].h3.altSvc; got != `h3=":443"; ma=2592000` {
		t.Errorf("Alt-Svc %q, want port 443", got)
	}
}

// QUIC connections hold the entrypoint's connection slots: with
// maxConnections 1 a second HTTP/3 client is refused while the first is
// connected, and served once it leaves.
func TestHTTP3ConnectionCap(t *testing.T) {
	be := dptest.EchoBackend(t, "s")
	cert, key := selfSigned(t, "a.test")
	eps := map[string]*static.EntryPoint{"websecure": {Address: "127.0.0.1:0", HTTP3: &static.EntryHTTP3{}, Transport: &static.EntryTransport{MaxConnections: 1}}}
	h := newHarness(t, eps, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers: {a@file: {rule: "Host(`+"`a.test`"+`)", service: s@file, tls: {}}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
tls:
  certificates: [{certFile: %s, keyFile: %s}]
`, be.URL, yamlQuote(cert), yamlQuote(key)), generation.Options{})
	addr := h.Addr("websecure")
	client := func() (*http.Client, *http3.Transport) {
		tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: "a.test"}} //nolint:gosec // test
		return &http.Client{Transport: hostRewriter{rt: tr, addr: addr}, Timeout: 5 * time.Second}, tr
	}
	get := func(c *http.Client) error {
		resp, err := c.Get("https://a.test/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	c1, t1 := client()
	if err := get(c1); err != nil {
		t.Fatalf("first client: %v", err)
	}
	c2, t2 := client()
	defer t2.Close()
	if err := get(c2); err == nil {
		t.Error("second QUIC connection served beyond maxConnections 1")
	}
	t1.Close()
	dptest.Eventually(t, "the second client served once the first left", func() bool {
		c3, t3 := client()
		defer t3.Close()
		return get(c3) == nil
	})
}
