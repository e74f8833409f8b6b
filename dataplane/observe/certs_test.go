package observe

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

func selfSigned(t *testing.T, cn string, serial int64, notAfter time.Time) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn}, NotBefore: t0, NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestTLSCertificatesFeedExpiryMetric(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "b.pem")
	if err := os.WriteFile(file, []byte(selfSigned(t, "b.example", 2, t0.Add(48*time.Hour))), 0o600); err != nil {
		t.Fatal(err)
	}
	tc := &config.TLSConfiguration{
		Certificates: []*config.CertAndStores{
			{Certificate: config.Certificate{CertFile: selfSigned(t, "a.example", 1, t0.Add(24*time.Hour))}},
			{Certificate: config.Certificate{CertFile: file}},
			{Certificate: config.Certificate{CertFile: filepath.Join(dir, "missing.pem")}},
			{Certificate: config.Certificate{CertFile: "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----"}},
		},
		Stores: map[string]*config.TLSStore{"default": {DefaultCertificate: &config.Certificate{CertFile: selfSigned(t, "default.example", 3, t0.Add(72*time.Hour))}}},
	}
	certs := TLSCertificates(tc)
	if len(certs) != 3 {
		t.Fatalf("got %d certificates, want 3 (unreadable and malformed ones skipped)", len(certs))
	}
	m := NewMetrics(MetricsOptions{Certificates: func() []*x509.Certificate { return TLSCertificates(tc) }})
	out := scrape(t, m.Handler())
	for _, want := range []string{
		`traefik_tls_certs_not_after{cn="a.example",sans="a.example",serial="1"} 1.7960688e+09`,
		`traefik_tls_certs_not_after{cn="b.example",sans="b.example",serial="2"} 1.7961552e+09`,
		`traefik_tls_certs_not_after{cn="default.example",sans="default.example",serial="3"} 1.7962416e+09`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if TLSCertificates(nil) != nil {
		t.Error("nil TLS configuration gives certificates")
	}
}
