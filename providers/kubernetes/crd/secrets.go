package crd

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
	corev1 "k8s.io/api/core/v1"
)

// secret returns Secret namespace/name.
func (b *builder) secret(namespace, name string) (*corev1.Secret, error) {
	if name == "" {
		return nil, fmt.Errorf("no Secret named")
	}
	s, ok := b.cl.Secrets().Get(namespace, name)
	if !ok {
		return nil, fmt.Errorf("secret %s/%s not found", namespace, name)
	}
	if err := k8s.CheckSecret(s); err != nil {
		return nil, err
	}
	return s, nil
}

// pemValue returns key of s, which must hold PEM. Gantry reads a
// certificate or key that is not PEM as a file path, so a Secret value
// must never pass through unchecked: "/etc/…" in a Secret would make
// Gantry read its own files.
func pemValue(s *corev1.Secret, key string) (string, error) {
	v, ok := s.Data[key]
	if !ok {
		return "", fmt.Errorf("secret %s/%s has no key %s", s.Namespace, s.Name, key)
	}
	if block, _ := pem.Decode(v); block == nil {
		return "", fmt.Errorf("secret %s/%s key %s is not PEM", s.Namespace, s.Name, key)
	}
	return string(v), nil
}

// certificate returns the certificate and key of a kubernetes.io/tls
// Secret (keys tls.crt and tls.key: PEM that parses as a key pair, so a
// value that is a path is refused, never read from Gantry's disk).
func (b *builder) certificate(namespace, name string) (config.Certificate, error) {
	if name == "" {
		return config.Certificate{}, fmt.Errorf("no Secret named")
	}
	return k8s.TLSSecret(b.cl.Secrets(), namespace, name)
}

// addCertificate publishes the certificate of Secret namespace/name (once,
// however many objects name it) in stores (nil: the default store).
func (b *builder) addCertificate(namespace, name string, stores []string) error {
	key := namespace + "/" + name
	if _, ok := b.certs[key]; ok {
		return nil
	}
	c, err := b.certificate(namespace, name)
	if err != nil {
		return err
	}
	b.certs[key] = &config.CertAndStores{Certificate: c, Stores: stores}
	return nil
}

// caFromSecret returns the CA of a Secret: key tls.ca, else ca.crt, else
// (Traefik's compatibility rule) its only key.
func (b *builder) caFromSecret(namespace, name string) (string, error) {
	s, err := b.secret(namespace, name)
	if err != nil {
		return "", err
	}
	for _, k := range []string{"tls.ca", "ca.crt"} {
		if _, ok := s.Data[k]; ok {
			return pemValue(s, k)
		}
	}
	if len(s.Data) == 1 {
		for k := range s.Data {
			return pemValue(s, k)
		}
	}
	return "", fmt.Errorf("secret %s/%s has neither tls.ca nor ca.crt", namespace, name)
}

// caFromConfigMap returns the CA of a ConfigMap (key tls.ca or ca.crt).
func (b *builder) caFromConfigMap(namespace, name string) (string, error) {
	cm, ok := b.cl.ConfigMap(namespace, name)
	if !ok {
		return "", fmt.Errorf("configMap %s/%s not found", namespace, name)
	}
	for _, k := range []string{"tls.ca", "ca.crt"} {
		if v, ok := cm.Data[k]; ok {
			if block, _ := pem.Decode([]byte(v)); block == nil {
				return "", fmt.Errorf("configMap %s/%s key %s is not PEM", namespace, name, k)
			}
			return v, nil
		}
	}
	return "", fmt.Errorf("configMap %s/%s has neither tls.ca nor ca.crt", namespace, name)
}

// rootCAs resolves a transport's CA references (rootCAs, then the
// deprecated rootCAsSecrets) in namespace.
func (b *builder) rootCAs(namespace string, refs []RootCA, secrets []string) ([]string, error) {
	var out []string
	for i, r := range refs {
		var ca string
		var err error
		switch {
		case r.Secret != nil && r.ConfigMap != nil:
			err = fmt.Errorf("secret and configMap are both set")
		case r.Secret != nil:
			ca, err = b.caFromSecret(namespace, *r.Secret)
		case r.ConfigMap != nil:
			ca, err = b.caFromConfigMap(namespace, *r.ConfigMap)
		default:
			err = fmt.Errorf("neither secret nor configMap is set")
		}
		if err != nil {
			return nil, fmt.Errorf("rootCAs[%d]: %w", i, err)
		}
		out = append(out, ca)
	}
	more, err := fromSecrets(secrets, "rootCAsSecrets", func(s string) (string, error) { return b.caFromSecret(namespace, s) })
	if err != nil {
		return nil, err
	}
	return append(out, more...), nil
}

// clientCertificates resolves certificatesSecrets.
func (b *builder) clientCertificates(namespace string, secrets []string) ([]config.Certificate, error) {
	return fromSecrets(secrets, "certificatesSecrets", func(s string) (config.Certificate, error) { return b.certificate(namespace, s) })
}

// fromSecrets reads each Secret of names with read, in order; an error
// names its place ("field[i]: ...").
func fromSecrets[T any](names []string, field string, read func(string) (T, error)) ([]T, error) {
	var out []T
	for i, s := range names {
		v, err := read(s)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// clientTLS resolves a middleware's TLS client settings from Secrets.
func (b *builder) clientTLS(namespace string, t *ClientTLS) (*config.ClientTLS, error) {
	if t == nil {
		return nil, nil
	}
	out := &config.ClientTLS{InsecureSkipVerify: t.InsecureSkipVerify}
	if t.CASecret != "" {
		ca, err := b.caFromSecret(namespace, t.CASecret)
		if err != nil {
			return nil, fmt.Errorf("tls.caSecret: %w", err)
		}
		out.CA = ca
	}
	if t.CertSecret != "" {
		c, err := b.certificate(namespace, t.CertSecret)
		if err != nil {
			return nil, fmt.Errorf("tls.certSecret: %w", err)
		}
		out.Cert, out.Key = c.CertFile, c.KeyFile
	}
	return out, nil
}

// maxUsers bounds the users one auth Secret may list.
const maxUsers = 10000

// authUsers returns the users of a basicAuth or digestAuth Secret. A
// kubernetes.io/basic-auth Secret (basicAuth only) gives one user from its
// username and password keys, hashed with SHA-1 ("{SHA}", as Traefik);
// any other Secret must hold exactly one key whose value lists
// "user:hash" (digest: "user:realm:hash") one per line.
func (b *builder) authUsers(namespace, name string, basic bool) ([]string, error) {
	s, err := b.secret(namespace, name)
	if err != nil {
		return nil, err
	}
	if basic && s.Type == corev1.SecretTypeBasicAuth {
		user, okU := s.Data[corev1.BasicAuthUsernameKey]
		pass, okP := s.Data[corev1.BasicAuthPasswordKey]
		if !okU || !okP {
			return nil, fmt.Errorf("secret %s/%s must hold both username and password", namespace, name)
		}
		if bytes.ContainsAny(user, ":\n") {
			return nil, fmt.Errorf("secret %s/%s: username holds ':' or a newline", namespace, name)
		}
		sum := sha1.Sum(pass)
		return []string{string(user) + ":{SHA}" + base64.StdEncoding.EncodeToString(sum[:])}, nil
	}
	if len(s.Data) != 1 {
		return nil, fmt.Errorf("secret %s/%s has %d keys: it must hold exactly one, listing the users", namespace, name, len(s.Data))
	}
	var users []string
	for _, v := range s.Data {
		sc := bufio.NewScanner(bytes.NewReader(v))
		sc.Buffer(make([]byte, 0, 4096), len(v)+1)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				users = append(users, line)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("secret %s/%s: %w", namespace, name, err)
		}
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("secret %s/%s lists no user", namespace, name)
	}
	if len(users) > maxUsers {
		return nil, fmt.Errorf("secret %s/%s lists %d users, over the limit of %d", namespace, name, len(users), maxUsers)
	}
	return users, nil
}
