package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// selfSigned returns PEM certificate and key for names (CN = names[0]).
func selfSigned(t *testing.T, names ...string) (certPEM, keyPEM string) {
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

// subject is the CN of the certificate s serves for sni, or the error.
func subject(t *testing.T, s *Store, sni string) string {
	t.Helper()
	c, err := s.Certificate(&tls.ClientHelloInfo{ServerName: sni})
	if err != nil {
		return "error: " + err.Error()
	}
	return c.Leaf.Subject.CommonName
}

// SNI choice: exact name (case and a trailing dot ignored), then a
// wildcard over the first label only, then the default; sniStrict refuses
// unknown names; the chosen TLS options reach the connection's Handshake,
// and the policy's Config serves the certificate the server put there.
func TestStoreChoosesBySNI(t *testing.T) {
	aC, aK := selfSigned(t, "a.example")
	wC, wK := selfSigned(t, "*.wild.example")
	defC, defK := selfSigned(t, "default.example")
	hs := &Handshake{}
	conn := func(*tls.ClientHelloInfo) *Handshake { return hs }
	c := &config.TLSConfiguration{
		Certificates: []*config.CertAndStores{{Certificate: config.Certificate{CertFile: aC, KeyFile: aK}}, {Certificate: config.Certificate{CertFile: wC, KeyFile: wK}}},
		Stores:       map[string]*config.TLSStore{"default": {DefaultCertificate: &config.Certificate{CertFile: defC, KeyFile: defK}}},
		Options:      map[string]*config.TLSOptions{"strict": {SniStrict: true, MinVersion: "VersionTLS13"}},
	}
	s, policies, errs := Build(c, Options{Hosts: map[string]map[string]string{"": {"strict.example": "strict"}}, Conn: conn})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	for sni, want := range map[string]string{
		"a.example": "a.example", "A.Example.": "a.example",
		"x.wild.example": "*.wild.example", "x.y.wild.example": "default.example",
		"": "default.example", "other.example": "default.example",
	} {
		if got := subject(t, s, sni); got != want {
			t.Errorf("SNI %q: %s, want %s", sni, got, want)
		}
		if hs.Policy == nil || hs.Policy.sniStrict {
			t.Errorf("SNI %q: policy %+v, want the default", sni, hs.Policy)
		}
	}
	if _, err := s.Certificate(&tls.ClientHelloInfo{ServerName: "strict.example"}); !errors.Is(err, errSNIStrict) {
		t.Errorf("sniStrict with no certificate: %v", err)
	}
	if hs.Policy != policies["strict"] || hs.Policy.Config().MinVersion != tls.VersionTLS13 {
		t.Errorf("strict host: policy %+v, want tls.options.strict", hs.Policy)
	}
	hs.Cert = &tls.Certificate{}
	if got, err := hs.Policy.Config().GetCertificate(&tls.ClientHelloInfo{}); err != nil || got != hs.Cert {
		t.Errorf("Config serves %v, %v; want the Handshake's certificate", got, err)
	}
}

// A certificate file that breaks keeps serving its last good pair (the
// error says so) while it is configured; once it is no longer configured
// the pair is forgotten. Without a default certificate the Cache's
// generated one serves, the same across builds.
func TestCacheKeepsLastGoodFile(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t, "file.example")
	cf, kf := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	if err := os.WriteFile(cf, []byte(certPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kf, []byte(keyPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &config.TLSConfiguration{Certificates: []*config.CertAndStores{{Certificate: config.Certificate{CertFile: cf, KeyFile: kf}}}}
	kept := &Cache{}
	s1, _, errs := Build(c, Options{Cache: kept})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	def1, _ := s1.Certificate(&tls.ClientHelloInfo{ServerName: "unknown.example"})
	if err := os.WriteFile(cf, []byte("half written"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, _, errs := Build(c, Options{Cache: kept})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), cf) || !strings.Contains(errs[0].Error(), "keeps serving") {
		t.Fatalf("broken file: errors %v, want one naming %s and saying the last good pair keeps serving", errs, cf)
	}
	if got := subject(t, s2, "file.example"); got != "file.example" {
		t.Errorf("broken file serves %s, want the last good file.example", got)
	}
	if def2, _ := s2.Certificate(&tls.ClientHelloInfo{ServerName: "unknown.example"}); def2 != def1 || def1.Leaf.Subject.CommonName != "GANTRY DEFAULT CERT" {
		t.Errorf("generated default changed across builds or is not Gantry's: %v", def2.Leaf.Subject)
	}
	Build(&config.TLSConfiguration{}, Options{Cache: kept}) // the file is no longer configured
	_, _, errs = Build(c, Options{Cache: kept})
	if len(errs) != 1 || strings.Contains(errs[0].Error(), "keeps serving") {
		t.Errorf("after the file left the configuration: errors %v, want the plain load error", errs)
	}
}

// CertPaths lists the files of tls.certificates and the default store's
// certificate once each, sorted, and no inline PEM.
func TestCertPaths(t *testing.T) {
	certPEM, keyPEM := selfSigned(t, "inline.example")
	c := &config.TLSConfiguration{
		Certificates: []*config.CertAndStores{
			{Certificate: config.Certificate{CertFile: "/b/c.pem", KeyFile: "/b/k.pem"}},
			{Certificate: config.Certificate{CertFile: certPEM, KeyFile: keyPEM}},
			nil,
		},
		Stores: map[string]*config.TLSStore{"default": {DefaultCertificate: &config.Certificate{CertFile: "/b/c.pem", KeyFile: "/a/k.pem"}}},
	}
	if got, want := CertPaths(c), []string{"/a/k.pem", "/b/c.pem", "/b/k.pem"}; !slices.Equal(got, want) {
		t.Errorf("CertPaths = %v, want %v", got, want)
	}
}
