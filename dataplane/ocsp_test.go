package dataplane

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"

	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// ocspResponder is a real OCSP responder (x/crypto/ocsp signs with the
// issuer's key) answering "good" for every serial except revoked ones.
type ocspResponder struct {
	ca      *x509.Certificate
	key     crypto.Signer
	life    time.Duration
	revoked sync.Map // serial text -> true
	hits    atomic.Int64
}

func (o *ocspResponder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.hits.Add(1)
	body, _ := io.ReadAll(r.Body)
	req, err := ocsp.ParseRequest(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	st := ocsp.Good
	if _, ok := o.revoked.Load(req.SerialNumber.Text(16)); ok {
		st = ocsp.Revoked
	}
	now := time.Now().Truncate(time.Second)
	resp, err := ocsp.CreateResponse(o.ca, o.ca, ocsp.Response{
		Status: st, SerialNumber: req.SerialNumber, ThisUpdate: now, NextUpdate: now.Add(o.life), RevokedAt: now,
	}, o.key)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/ocsp-response")
	_, _ = w.Write(resp)
}

// chainPEM issues a leaf for name from the responder's CA, naming url as
// its OCSP server, and returns the leaf+issuer chain and key as PEM.
func (o *ocspResponder) chainPEM(t *testing.T, name, url string) (chain, key string, serial *big.Int) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	serial, _ = rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), OCSPServer: []string{url},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, o.ca, &k.PublicKey, o.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	chain = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) + string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: o.ca.Raw}))
	return chain, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})), serial
}

// Served certificates get a "good" OCSP staple fetched from the leaf's
// OCSP server and refreshed before it expires; a revoked certificate gets
// none.
func TestOCSPStapling(t *testing.T) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test OCSP CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	resp := &ocspResponder{ca: ca, key: caKey, life: 4 * time.Second}
	srv := httptest.NewServer(resp)
	defer srv.Close()
	goodChain, goodKey, goodSerial := resp.chainPEM(t, "good.test", srv.URL)
	badChain, badKey, badSerial := resp.chainPEM(t, "revoked.test", srv.URL)
	resp.revoked.Store(badSerial.Text(16), true)

	st := certs.NewStapler(slog.New(slog.DiscardHandler), srv.Client())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = st.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	h := newHarness(t, nil, nil)
	h.Apply(`
tls:
  certificates:
    - certFile: `+yamlQuote(goodChain)+`
      keyFile: `+yamlQuote(goodKey)+`
    - certFile: `+yamlQuote(badChain)+`
      keyFile: `+yamlQuote(badKey)+`
`, generation.Options{Stapler: st})

	staple := func(sni string) *ocsp.Response {
		c := tlsDial(t, h.Addr("web"), sni)
		defer c.Close()
		raw := c.ConnectionState().OCSPResponse
		if raw == nil {
			return nil
		}
		r, err := ocsp.ParseResponse(raw, ca)
		if err != nil {
			t.Fatalf("%s: stapled response does not parse: %v", sni, err)
		}
		return r
	}
	var first *ocsp.Response
	dptest.Eventually(t, "a staple for good.test", func() bool { first = staple("good.test"); return first != nil })
	if first.Status != ocsp.Good || first.SerialNumber.Cmp(goodSerial) != 0 {
		t.Errorf("staple: status %d serial %x, want good for %x", first.Status, first.SerialNumber, goodSerial)
	}
	if r := staple("revoked.test"); r != nil {
		t.Errorf("revoked certificate stapled (status %d)", r.Status)
	}
	// Refreshed halfway through its 4s validity: a newer response.
	dptest.Eventually(t, "a refreshed staple", func() bool {
		r := staple("good.test")
		return r != nil && r.ThisUpdate.After(first.ThisUpdate)
	})
}
