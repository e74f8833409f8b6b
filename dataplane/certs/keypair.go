package certs

import (
	"crypto/tls"
	"crypto/x509"
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

// ClientConfig returns the configuration Gantry dials TLS servers with (an
// HTTP serversTransport, a TCP serversTransport's tls block): c's
// ServerName (verified, and sent as SNI), InsecureSkipVerify, the CAs of
// c.RootCAs (file paths or PEM; none: the system's roots) and the client
// certificates of c.Certificates. Errors name the field and its index:
// "rootCAs[1]: read /ca.pem: …", "rootCAs[0]: no PEM certificate found",
// "certificates[0]: keyFile: …".
func ClientConfig(c *config.TLSClientCommon) (*tls.Config, error) {
	tc := &tls.Config{ServerName: c.ServerName, InsecureSkipVerify: c.InsecureSkipVerify} //nolint:gosec // operator's explicit choice
	if len(c.RootCAs) > 0 {
		pool := x509.NewCertPool()
		for i, ca := range c.RootCAs {
			pem, err := PEMOrFile(ca)
			if err != nil {
				return nil, fmt.Errorf("rootCAs[%d]: %w", i, err)
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("rootCAs[%d]: no PEM certificate found", i)
			}
		}
		tc.RootCAs = pool
	}
	for i, cc := range c.Certificates {
		cert, err := LoadKeyPair(cc)
		if err != nil {
			return nil, fmt.Errorf("certificates[%d]: %w", i, err)
		}
		tc.Certificates = append(tc.Certificates, cert)
	}
	return tc, nil
}

// describePEM names a certificate source for messages: the path, or
// "(inline PEM)".
func describePEM(s string) string {
	if strings.Contains(s, "-----BEGIN") {
		return "(inline PEM)"
	}
	return s
}
