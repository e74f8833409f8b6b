package certs

import (
	"crypto/tls"
	"fmt"
	"os"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// PEMOrFile returns s itself when it holds PEM data, else the contents of
// the file s names. An error names the file.
func PEMOrFile(s string) ([]byte, error) {
	if strings.Contains(s, "-----BEGIN") {
		return []byte(s), nil
	}
	b, err := os.ReadFile(s)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s, err)
	}
	return b, nil
}

// LoadKeyPair loads a certificate and key, each a file path or inline PEM.
// Errors name the field (certFile, keyFile) or the certificate's source.
func LoadKeyPair(c config.Certificate) (tls.Certificate, error) {
	certPEM, err := PEMOrFile(c.CertFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("certFile: %w", err)
	}
	keyPEM, err := PEMOrFile(c.KeyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("keyFile: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("certificate %s: %w", describePEM(c.CertFile), err)
	}
	return cert, nil
}

// describePEM names a certificate source for messages: the path, or
// "(inline PEM)".
func describePEM(s string) string {
	if strings.Contains(s, "-----BEGIN") {
		return "(inline PEM)"
	}
	return s
}
