package dataplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"
)

// benchCert is a self-signed certificate for "bench.test" with key, one of
// the ACME key types (EC256 is Gantry's default, RSA4096 Traefik's).
func benchCert(b *testing.B, keyType string) tls.Certificate {
	b.Helper()
	var key any
	var pub any
	switch keyType {
	case "EC256":
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		key, pub = k, &k.PublicKey
	case "RSA2048", "RSA4096":
		bits := 2048
		if keyType == "RSA4096" {
			bits = 4096
		}
		k, _ := rsa.GenerateKey(rand.Reader, bits)
		key, pub = k, &k.PublicKey
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench.test"}, DNSNames: []string{"bench.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		b.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// BenchmarkTLSHandshake measures full TLS 1.3 handshakes (no resumption)
// through crypto/tls over an in-memory pipe, per ACME keyType; the server
// side's cost is what a key type changes (one signature per handshake).
// The ratio EC256/RSA4096 is the reason Gantry's default keyType is EC256.
func BenchmarkTLSHandshake(b *testing.B) {
	for _, kt := range []string{"EC256", "RSA2048", "RSA4096"} {
		b.Run(kt, func(b *testing.B) {
			srvConf := &tls.Config{Certificates: []tls.Certificate{benchCert(b, kt)}, SessionTicketsDisabled: true, MinVersion: tls.VersionTLS12}
			cliConf := &tls.Config{ServerName: "bench.test", InsecureSkipVerify: true, SessionTicketsDisabled: true} //nolint:gosec // benchmark
			b.ReportAllocs()
			for b.Loop() {
				c, s := net.Pipe()
				done := make(chan error, 1)
				go func() { done <- tls.Server(s, srvConf).Handshake() }()
				if err := tls.Client(c, cliConf).Handshake(); err != nil {
					b.Fatal(err)
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				c.Close()
				s.Close()
			}
		})
	}
}
