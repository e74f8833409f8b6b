package k8s

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// selfSigned returns a PEM certificate and key for name.
func selfSigned(t *testing.T, name string) (crt, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

// TLS Secrets are bounded: over 1 MiB (dropped from the cache, size kept)
// or a chain over 16 certificates is an error naming namespace/name; a
// normal one and a chain at the limit load.
func TestTLSSecretLimits(t *testing.T) {
	crt, key := selfSigned(t, "app.example.test")
	tlsSecret := func(name string, crt []byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}}
	}
	if c, err := TLSFromSecret(tlsSecret("ok", crt)); err != nil || c.CertFile != string(crt) {
		t.Fatalf("a normal TLS Secret: %v", err)
	}
	atLimit := []byte(strings.Repeat(string(crt), MaxChainCertificates))
	if _, err := TLSFromSecret(tlsSecret("sixteen", atLimit)); err != nil {
		t.Errorf("a chain of %d: %v", MaxChainCertificates, err)
	}
	long := append(atLimit, crt...)
	if _, err := TLSFromSecret(tlsSecret("chain", long)); err == nil || !strings.Contains(err.Error(), "secret apps/chain: tls.crt holds 17 certificates, over the limit of 16") {
		t.Errorf("a chain of 17: %v", err)
	}
	huge := tlsSecret("huge", []byte(strings.Repeat(string(crt), MaxSecretBytes/len(crt)+1)))
	o, err := StripManagedFields(huge)
	if err != nil {
		t.Fatal(err)
	}
	s := o.(*corev1.Secret)
	if len(s.Data) != 0 {
		t.Fatal("the informer transform kept an oversize Secret's data")
	}
	if _, err := TLSFromSecret(s); err == nil || !strings.Contains(err.Error(), "secret apps/huge is ") || !strings.Contains(err.Error(), "over the 1048576-byte limit") {
		t.Errorf("an oversize Secret: %v", err)
	}
	small := tlsSecret("small", crt)
	if o, _ := StripManagedFields(small); len(o.(*corev1.Secret).Data) != 2 {
		t.Error("the transform dropped a normal Secret's data")
	}
}
