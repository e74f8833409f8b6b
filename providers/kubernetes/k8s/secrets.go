package k8s

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gantry-proxy/gantry/config"
)

// MaxSecretBytes bounds the data of a Secret Gantry reads (every key and
// value): Kubernetes' own limit for a Secret (1 MiB, core/v1 validation).
// A larger Secret (an API server with other limits, a hostile one) is
// dropped from the informer caches by StripManagedFields, keeping only its
// size, and every reference to it is a problem naming it.
const MaxSecretBytes = 1 << 20

// MaxChainCertificates bounds the certificates in a TLS Secret's tls.crt
// (the leaf and its intermediates): every handshake sends them all.
const MaxChainCertificates = 16

// oversizeAnnotation records, on a cached Secret whose data was dropped,
// how many bytes it held.
const oversizeAnnotation = "gantry.io/dropped-secret-bytes"

// SecretSize is the size of s's data: every key and value of Data and
// StringData, in bytes.
func SecretSize(s *corev1.Secret) int {
	n := 0
	for k, v := range s.Data {
		n += len(k) + len(v)
	}
	for k, v := range s.StringData {
		n += len(k) + len(v)
	}
	return n
}

// dropOversizeSecret empties the data of a Secret over MaxSecretBytes and
// notes its size in an annotation (informer transform: the cache never
// holds it).
func dropOversizeSecret(s *corev1.Secret) {
	n := SecretSize(s)
	if n <= MaxSecretBytes {
		return
	}
	s.Data, s.StringData = nil, nil
	ann := make(map[string]string, len(s.Annotations)+1)
	for k, v := range s.Annotations {
		ann[k] = v
	}
	ann[oversizeAnnotation] = strconv.Itoa(n)
	s.Annotations = ann
}

// CheckSecret returns an error naming Secret namespace/name when its data
// is over MaxSecretBytes (or was dropped from the cache for being so).
func CheckSecret(s *corev1.Secret) error {
	n := SecretSize(s)
	if v, ok := s.Annotations[oversizeAnnotation]; ok {
		if d, err := strconv.Atoi(v); err == nil {
			n = d
		}
	}
	if n > MaxSecretBytes {
		return fmt.Errorf("secret %s/%s is %d bytes, over the %d-byte limit", s.Namespace, s.Name, n, MaxSecretBytes)
	}
	return nil
}

// TLSSecret returns the certificate of Secret ns/name (keys tls.crt and
// tls.key, PEM) as inline PEM, or an error naming the Secret: not found,
// over MaxSecretBytes, a key missing or empty, a chain of more than
// MaxChainCertificates, or a pair that does not parse.
func TLSSecret(secrets Lister[*corev1.Secret], ns, name string) (config.Certificate, error) {
	s, ok := secrets.Get(ns, name)
	if !ok {
		return config.Certificate{}, fmt.Errorf("secret %s/%s not found", ns, name)
	}
	return TLSFromSecret(s)
}

// TLSFromSecret is TLSSecret for a Secret already read. A value that is
// not a PEM key pair (a file path, say) is refused, never read from disk.
func TLSFromSecret(s *corev1.Secret) (config.Certificate, error) {
	if err := CheckSecret(s); err != nil {
		return config.Certificate{}, err
	}
	var missing []string
	for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
		if len(s.Data[k]) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return config.Certificate{}, fmt.Errorf("secret %s/%s: %s missing or empty", s.Namespace, s.Name, strings.Join(missing, " and "))
	}
	crt, key := s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	if n := bytes.Count(crt, []byte("-----BEGIN CERTIFICATE-----")); n > MaxChainCertificates {
		return config.Certificate{}, fmt.Errorf("secret %s/%s: tls.crt holds %d certificates, over the limit of %d", s.Namespace, s.Name, n, MaxChainCertificates)
	}
	if _, err := tls.X509KeyPair(crt, key); err != nil {
		return config.Certificate{}, fmt.Errorf("secret %s/%s: tls.crt/tls.key: %w", s.Namespace, s.Name, err)
	}
	return config.Certificate{CertFile: string(crt), KeyFile: string(key)}, nil
}
