package observe

import (
	"crypto/x509"
	"encoding/pem"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// TLSCertificates returns the certificates named in c (tls.certificates and
// each store's defaultCertificate), for MetricsOptions.Certificates. A
// certFile is inline PEM when it contains "-----BEGIN", a file path
// otherwise. Files that cannot be read or parsed are skipped: the dataplane
// reports them as TLS problems; the metric only shows what parses. Only
// leaf certificates (the first of each chain) are returned.
func TLSCertificates(c *config.TLSConfiguration) []*x509.Certificate {
	if c == nil {
		return nil
	}
	var out []*x509.Certificate
	add := func(certFile string) {
		if cert := leaf(certFile); cert != nil {
			out = append(out, cert)
		}
	}
	for _, cs := range c.Certificates {
		if cs != nil {
			add(cs.CertFile)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Stores)) {
		if s := c.Stores[name]; s != nil && s.DefaultCertificate != nil {
			add(s.DefaultCertificate.CertFile)
		}
	}
	return out
}

func leaf(certFile string) *x509.Certificate {
	data := []byte(certFile)
	if !strings.Contains(certFile, "-----BEGIN") {
		var err error
		if data, err = os.ReadFile(certFile); err != nil {
			return nil
		}
	}
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil
		}
		if block.Type == "CERTIFICATE" {
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil
			}
			return cert
		}
	}
}
