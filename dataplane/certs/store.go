package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/router"
)

// Cache is the certificate state kept across generations (the
// dataplane's Pool holds one): the generated default certificate (ECDSA
// P-256, self-signed, CN "GANTRY DEFAULT CERT"), made once on first use so
// it stays the same across configuration swaps, and the last good key pair
// of each certificate file, which keeps serving while the file is broken
// (half written, deleted, replaced by garbage). Safe for concurrent use;
// the zero value is ready.
type Cache struct {
	once sync.Once
	cert *tls.Certificate
	err  error

	mu       sync.Mutex
	lastGood map[config.Certificate]*tls.Certificate // file pairs only, not inline PEM
}

// isFilePair reports whether c names files (not inline PEM).
func isFilePair(c config.Certificate) bool {
	return !strings.Contains(c.CertFile, "-----BEGIN") && !strings.Contains(c.KeyFile, "-----BEGIN")
}

// load loads c; when c names files that no longer load but did before, it
// returns the last good pair with the error (so the caller reports the
// file and keeps serving). Successful file loads are remembered.
func (d *Cache) load(c config.Certificate) (cert, stale *tls.Certificate, err error) {
	cert, err = loadLeaf(c)
	if !isFilePair(c) {
		return cert, nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		return nil, d.lastGood[c], err
	}
	if d.lastGood == nil {
		d.lastGood = map[config.Certificate]*tls.Certificate{}
	}
	d.lastGood[c] = cert
	return cert, nil, nil
}

// retain forgets the last good pairs of files no longer configured.
func (d *Cache) retain(used map[config.Certificate]bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for c := range d.lastGood {
		if !used[c] {
			delete(d.lastGood, c)
		}
	}
}

// loadKept loads c through the last-good cache and records it as used. A
// broken file with a last good pair returns that pair and an error saying
// it keeps serving.
func (d *Cache) loadKept(c config.Certificate, used map[config.Certificate]bool) (*tls.Certificate, error) {
	used[c] = true
	cert, stale, err := d.load(c)
	if err != nil && stale != nil {
		return stale, fmt.Errorf("%w; the last good certificate from %s (serial %s, valid until %s) keeps serving",
			err, c.CertFile, stale.Leaf.SerialNumber.Text(16), stale.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return cert, err
}

func (d *Cache) get() (*tls.Certificate, error) {
	d.once.Do(func() { d.cert, d.err = generateCert() })
	return d.cert, d.err
}

func generateCert() (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate default certificate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, fmt.Errorf("generate default certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "GANTRY DEFAULT CERT"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"gantry.default"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("generate default certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse default certificate: %w", err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// Store chooses a certificate by SNI: exact name, then a wildcard
// "*.rest" covering the first label, then the default. Immutable once built.
type Store struct {
	exact map[string]*tls.Certificate
	def   *tls.Certificate
	// policies maps router hosts to their tls.options; defPolicy is
	// tls.options.default (or Gantry's default).
	policies  map[string]map[string]*Policy // entrypoint -> host -> policy
	defPolicy *Policy
	byName    map[string]*Policy // tls.options by name (built or broken)
	// challenges answers TLS-ALPN-01 validation handshakes (may be nil);
	// acme is the policy of those handshakes.
	challenges Challenges
	acme       *Policy
	// stapler adds OCSP staples (may be nil).
	stapler *Stapler
	// conn finds the handshake's server connection (may be nil).
	conn ConnOf
}

// add indexes c under its DNS SANs (or its CN when it has none) and IP SANs.
// The first certificate added for a name wins.
func (s *Store) add(c *tls.Certificate) {
	names := c.Leaf.DNSNames
	if len(names) == 0 && c.Leaf.Subject.CommonName != "" {
		names = []string{c.Leaf.Subject.CommonName}
	}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSuffix(n, "."))
		if _, ok := s.exact[n]; !ok {
			s.exact[n] = c
		}
	}
	for _, ip := range c.Leaf.IPAddresses {
		if _, ok := s.exact[ip.String()]; !ok {
			s.exact[ip.String()] = c
		}
	}
}

// Certificate is a tls.Config.GetCertificate. A TLS-ALPN-01 validation
// handshake (ALPN acme-tls/1, challenge pending) gets the challenge
// certificate and only that protocol. A hello without SNI, or with a name
// no certificate covers, gets the default certificate, unless the TLS
// options of that name set sniStrict. When the handshake runs on a server
// connection (Options.Conn finds its Handshake), the TLS options chosen
// for the name are left in the Handshake for the server to apply.
func (s *Store) Certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := challengeCert(s.challenges, hello); c != nil {
		if hs := s.conn.of(hello); hs != nil {
			hs.Policy = s.acme
		}
		return c, nil
	}
	name := strings.ToLower(strings.TrimSuffix(hello.ServerName, "."))
	hs := s.conn.of(hello)
	ep := ""
	if hs != nil {
		ep = hs.EntryPoint
	}
	p := s.policyFor(ep, name)
	if hs != nil {
		hs.Policy = p
	}
	if p.err != nil {
		// Options that cannot be built fail the handshake (Traefik's
		// closing route) rather than fall back to weaker defaults.
		return nil, fmt.Errorf("tls: options %q of %q cannot be used: %w", p.name, name, p.err)
	}
	if name == "" && hello.Conn != nil {
		if h, _, err := net.SplitHostPort(hello.Conn.LocalAddr().String()); err == nil {
			name = h
		}
	}
	c, ok := s.exact[name]
	if !ok {
		if i := strings.IndexByte(name, '.'); i > 0 {
			c, ok = s.exact["*"+name[i:]]
		}
	}
	if !ok {
		if p.sniStrict {
			return nil, errSNIStrict
		}
		c = s.def
	}
	if s.stapler != nil {
		c = s.stapler.staple(c)
	}
	return c, nil
}

// Options are what Build needs besides the TLS configuration.
type Options struct {
	// Hosts maps an entrypoint and a router host name to the tls.options
	// name its routers resolved to (router.TLSHosts); a host not listed
	// gets tls.options.default.
	Hosts map[string]map[string]string
	// Cache keeps the default certificate and the last good file pairs
	// across generations; nil means a fresh one.
	Cache *Cache
	// Challenges answers ACME TLS-ALPN-01 handshakes; nil means none.
	Challenges Challenges
	// Stapler staples OCSP responses to served certificates; nil: none.
	Stapler *Stapler
	// Conn finds the Handshake of the server connection a handshake runs
	// on; nil means none (the chosen TLS options are then not handed on).
	Conn ConnOf
}

// Build loads every certificate of tls.certificates (file paths or inline
// PEM) into one Store chosen by SNI, and takes the default certificate
// from tls.stores.default (defaultCertificate), or the certificate
// covering defaultGeneratedCert's domain once its resolver has one, or
// else the Cache's generated ECDSA P-256 certificate. It also returns the
// resolved tls.options by name.
// Each unreadable certificate is returned as an error naming its file and
// is left out, unless the same files loaded before in this Cache: then the
// last good pair keeps serving (and the error says so); the others still
// serve. TLS options (min/max version, cipher suites, curves, client
// authentication, sniStrict, ALPN) apply per SNI name: a host's routers'
// tls.options (Options.Hosts), else tls.options.default. Stores other
// than "default" are accepted but share the one store, as Traefik only
// supports "default".
// Source: https://doc.traefik.io/traefik/https/tls/
func Build(c *config.TLSConfiguration, o Options) (*Store, map[string]*Policy, []error) {
	var errs []error
	kept := o.Cache
	if kept == nil {
		kept = &Cache{}
	}
	s := &Store{exact: map[string]*tls.Certificate{}, conn: o.Conn}
	used := map[config.Certificate]bool{}
	defer kept.retain(used)
	if c != nil {
		for i, cs := range c.Certificates {
			if cs == nil {
				continue
			}
			cert, err := kept.loadKept(cs.Certificate, used)
			if err != nil {
				errs = append(errs, fmt.Errorf("tls.certificates[%d]: %w", i, err))
			}
			if cert != nil {
				s.add(cert)
			}
		}
		if st := c.Stores["default"]; st != nil && st.DefaultCertificate != nil {
			cert, err := kept.loadKept(*st.DefaultCertificate, used)
			if err != nil {
				errs = append(errs, fmt.Errorf("tls.stores.default.defaultCertificate: %w", err))
			}
			if cert != nil {
				s.def = cert
			}
		}
	}
	s.defPolicy = DefaultPolicy(o.Conn)
	byName := map[string]*Policy{}
	if c != nil {
		for _, name := range slices.Sorted(maps.Keys(c.Options)) {
			p, warnings, err := newPolicy(name, c.Options[name], o.Conn)
			for _, w := range warnings {
				errs = append(errs, &router.TLSWarning{Err: fmt.Errorf("tls.options.%s: %s", name, w)})
			}
			if err != nil {
				errs = append(errs, &router.TLSOptionsError{Name: name, Err: err})
				p = brokenPolicy(name, err)
			}
			byName[name] = p
		}
	}
	if p := byName["default"]; p != nil {
		s.defPolicy = p
	}
	s.byName = byName
	s.policies = make(map[string]map[string]*Policy, len(o.Hosts))
	missing := map[string]bool{}
	for ep, hosts := range o.Hosts {
		m := make(map[string]*Policy, len(hosts))
		for host, name := range hosts {
			p := s.Policy(name)
			if p == nil {
				if !missing[name] {
					missing[name] = true
					errs = append(errs, &router.TLSOptionsError{Name: name, Missing: true, Err: errors.New("does not exist")})
				}
				p = brokenPolicy(name, fmt.Errorf("tls.options %q does not exist", name))
				byName[name] = p
			}
			m[host] = p
		}
		s.policies[ep] = m
	}
	if c != nil && s.def == nil {
		if st := c.Stores["default"]; st != nil && st.DefaultGeneratedCert != nil {
			s.def = s.generatedDefault(st.DefaultGeneratedCert)
		}
	}
	s.challenges = o.Challenges
	if s.challenges != nil {
		s.acme = acmePolicy(o.Conn)
	}
	if s.def == nil {
		def, err := kept.get()
		if err != nil {
			errs = append(errs, err)
		}
		s.def = def
	}
	if st := o.Stapler; st != nil {
		s.stapler = st
		all := []*tls.Certificate{s.def}
		for _, c := range s.exact {
			all = append(all, c)
		}
		st.register(all)
	}
	return s, byName, errs
}

// generatedDefault returns the loaded certificate that covers every name
// of gc.Domain (the resolver's certificate, which providers/acme adds to
// tls.certificates once it has it), or nil while there is none: the
// generated certificate serves meanwhile.
// Source: https://doc.traefik.io/traefik/https/tls/#certificates-stores
func (s *Store) generatedDefault(gc *config.GeneratedCert) *tls.Certificate {
	if gc.Domain == nil || gc.Domain.Main == "" {
		return nil
	}
	var found *tls.Certificate
	for _, n := range append([]string{gc.Domain.Main}, gc.Domain.SANs...) {
		c := s.exact[strings.ToLower(n)]
		if c == nil || (found != nil && c != found) {
			return nil
		}
		found = c
	}
	return found
}

// loadLeaf loads a key pair and parses its leaf.
func loadLeaf(c config.Certificate) (*tls.Certificate, error) {
	cert, err := LoadKeyPair(c)
	if err != nil {
		return nil, err
	}
	if cert.Leaf == nil {
		leaf, err := x509.ParseCertificate(cert.Certificate[0])
		if err != nil {
			return nil, fmt.Errorf("certificate %s: %w", describePEM(c.CertFile), err)
		}
		cert.Leaf = leaf
	}
	return &cert, nil
}

// tlsVersions checks minVersion and maxVersion ("VersionTLS12", …).
func tlsVersions(o *config.TLSOptions) ([2]uint16, error) {
	var v [2]uint16
	if o == nil {
		return v, nil
	}
	for i, s := range []string{o.MinVersion, o.MaxVersion} {
		switch s {
		case "":
		case "VersionTLS10":
			v[i] = tls.VersionTLS10
		case "VersionTLS11":
			v[i] = tls.VersionTLS11
		case "VersionTLS12":
			v[i] = tls.VersionTLS12
		case "VersionTLS13":
			v[i] = tls.VersionTLS13
		default:
			return v, fmt.Errorf("unknown TLS version %q (want VersionTLS12 or VersionTLS13)", s)
		}
	}
	return v, nil
}
