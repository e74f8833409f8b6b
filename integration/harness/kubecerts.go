package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// kubeCerts are the files a test API server needs, all in one directory:
// ca.crt (the CA clients trust), apiserver.crt/.key (serving certificate
// for 127.0.0.1 and localhost), sa.key/sa.pub (RSA pair signing
// service-account tokens) and tokens.csv (the admin bearer token, in
// group system:masters).
type kubeCerts struct {
	CAFile, CertFile, KeyFile, SAKey, SAPub, TokenFile string
	// CA and CAKey sign further serving certificates (TestCert).
	CA    *x509.Certificate
	CAKey *ecdsa.PrivateKey
}

// writeKubeCerts makes the files of kubeCerts in dir with crypto/x509,
// token being the admin bearer token.
func writeKubeCerts(dir, token string) (*kubeCerts, error) {
	c := &kubeCerts{
		CAFile: filepath.Join(dir, "ca.crt"), CertFile: filepath.Join(dir, "apiserver.crt"),
		KeyFile: filepath.Join(dir, "apiserver.key"), SAKey: filepath.Join(dir, "sa.key"),
		SAPub: filepath.Join(dir, "sa.pub"), TokenFile: filepath.Join(dir, "tokens.csv"),
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gantry-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	c.CA, _ = x509.ParseCertificate(caDER)
	c.CAKey = caKey
	certPEM, keyPEM, err := signServing(c.CA, caKey, "kube-apiserver", []string{"localhost", "kubernetes.default.svc"}, []net.IP{net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	files := []struct {
		path string
		data []byte
	}{
		{c.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})},
		{c.CertFile, certPEM},
		{c.KeyFile, keyPEM},
		{c.SAKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)})},
		{c.SAPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub})},
		{c.TokenFile, []byte(token + ",admin,admin-uid,system:masters\n")},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// signServing issues a serving certificate for names and ips signed by
// ca, returning the certificate and key in PEM.
func signServing(ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, names []string, ips []net.IP) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: names, IPAddresses: ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("sign certificate for %v: %w", names, err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
}
