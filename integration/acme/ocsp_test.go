package acme

import (
	"crypto"
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
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// A certificate file whose leaf names an OCSP responder is served with a
// stapled "good" response, fetched by the gantry binary from the
// responder (a real one: x/crypto/ocsp signing with the issuer's key).
func TestOCSPStapledForFileCertificate(t *testing.T) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test OCSP CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	responder := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, err := ocsp.ParseRequest(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		now := time.Now().Truncate(time.Second)
		resp, err := ocsp.CreateResponse(ca, ca, ocsp.Response{Status: ocsp.Good, SerialNumber: req.SerialNumber, ThisUpdate: now, NextUpdate: now.Add(time.Hour)}, crypto.Signer(caKey))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(resp)
	}))
	defer responder.Close()

	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: "ocsp.test"}, DNSNames: []string{"ocsp.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), OCSPServer: []string{responder.URL},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	kb, _ := x509.MarshalECPrivateKey(k)
	certs := t.TempDir()
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...)
	if err := os.WriteFile(filepath.Join(certs, "c.pem"), chain, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(certs, "k.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "tls.yml", fmt.Sprintf("tls:\n  certificates:\n    - certFile: %s\n      keyFile: %s\n", filepath.Join(certs, "c.pem"), filepath.Join(certs, "k.pem")))
	g := harness.Start(t, fmt.Sprintf("entryPoints:\n  websecure: {address: \"127.0.0.1:%d\"}\nproviders:\n  file: {directory: %s}\n", freePort(t), dyn))
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	harness.Try(t, 60*time.Second, func() error {
		c, err := tls.Dial("tcp", g.EntryPoints["websecure"], &tls.Config{ServerName: "ocsp.test", RootCAs: roots})
		if err != nil {
			return err
		}
		defer c.Close()
		raw := c.ConnectionState().OCSPResponse
		if raw == nil {
			return fmt.Errorf("no OCSP staple yet")
		}
		r, err := ocsp.ParseResponseForCert(raw, c.ConnectionState().PeerCertificates[0], ca)
		if err != nil {
			return harness.Permanent(err)
		}
		if r.Status != ocsp.Good || r.SerialNumber.Int64() != 42 {
			return harness.Permanent(fmt.Errorf("staple: status %d serial %v", r.Status, r.SerialNumber))
		}
		return nil
	})
}
