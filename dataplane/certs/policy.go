package certs

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/gantry-proxy/gantry/config"
)

// Policy is one resolved TLS options set (tls.options.<name>): what a
// handshake for a host whose routers name it is allowed to negotiate.
// Source: https://doc.traefik.io/traefik/https/tls/#tls-options
type Policy struct {
	// name is the tls.options name ("default" for Gantry's default);
	// opts the options it was built from (nil for the built-in default),
	// so that two generations' policies of one name can be compared
	// (Same). err is set for options that cannot be built: every
	// handshake choosing the policy fails with it (fail closed).
	name string
	opts *config.TLSOptions
	err  error

	minVersion, maxVersion uint16
	ciphers                []uint16
	curves                 []tls.CurveID
	clientAuth             tls.ClientAuthType
	clientCAs              *x509.CertPool
	sniStrict              bool
	alpn                   []string
	noTickets              bool
	conn                   ConnOf // finds the certificate chosen for the handshake

	once sync.Once
	conf *tls.Config
}

// DefaultPolicy returns Gantry's default: TLS 1.2 or newer, Go's cipher
// suites and curves, ALPN h2 then http/1.1. conn finds the Handshake whose
// certificate its Config serves (nil: none, Config then has no
// certificate of its own).
func DefaultPolicy(conn ConnOf) *Policy {
	return &Policy{name: "default", minVersion: tls.VersionTLS12, alpn: []string{"h2", "http/1.1"}, conn: conn}
}

// brokenPolicy is the policy of options that cannot be built (err) or do
// not exist: a handshake choosing it fails (Store.Certificate returns err;
// its Config has no certificate to serve either).
func brokenPolicy(name string, err error) *Policy { return &Policy{name: name, err: err} }

// Err is why the options cannot be built (nil when they can): a
// handshake under them must fail.
func (p *Policy) Err() error { return p.err }

// Name is the tls.options name of the policy.
func (p *Policy) Name() string { return p.name }

// Same reports whether p and q are the same options: same name and same
// configuration (a policy of an older generation stays valid while its
// options are unchanged). CA files are compared by name, not content.
func (p *Policy) Same(q *Policy) bool {
	if p == q {
		return true
	}
	if p == nil || q == nil || p.name != q.name || p.err != nil || q.err != nil {
		return false
	}
	return reflect.DeepEqual(p.opts, q.opts)
}

// newPolicy resolves o. Errors name the bad field; warnings are problems
// that change nothing (TLS 1.3 suites in cipherSuites).
func newPolicy(name string, o *config.TLSOptions, conn ConnOf) (p *Policy, warnings []string, err error) {
	p = DefaultPolicy(conn)
	p.name = name
	if o == nil {
		return p, nil, nil
	}
	p.opts = o
	v, err := tlsVersions(o)
	if err != nil {
		return nil, nil, err
	}
	if v[0] != 0 {
		p.minVersion = v[0]
	}
	p.maxVersion = v[1]
	if len(o.CipherSuites) > 0 {
		byName := map[string]*tls.CipherSuite{}
		for _, s := range slices.Concat(tls.CipherSuites(), tls.InsecureCipherSuites()) {
			byName[s.Name] = s
		}
		for _, n := range o.CipherSuites {
			cs, ok := byName[n]
			if !ok {
				return nil, nil, fmt.Errorf("cipherSuites: unknown suite %q", n)
			}
			if slices.Equal(cs.SupportedVersions, []uint16{tls.VersionTLS13}) {
				// Go chooses the TLS 1.3 suites itself (crypto/tls
				// Config.CipherSuites); listing one restricts nothing.
				warnings = append(warnings, fmt.Sprintf("cipherSuites: %s is a TLS 1.3 suite, which cannot be configured: TLS 1.3 connections use Go's suites whatever the list says", n))
				continue
			}
			p.ciphers = append(p.ciphers, cs.ID)
		}
	}
	for _, n := range o.CurvePreferences {
		id, ok := curveByName[n]
		if !ok {
			return nil, nil, fmt.Errorf("curvePreferences: unknown curve %q", n)
		}
		p.curves = append(p.curves, id)
	}
	ca, ok := clientAuthByName[o.ClientAuth.ClientAuthType]
	if !ok {
		return nil, nil, fmt.Errorf("clientAuth.clientAuthType: unknown type %q", o.ClientAuth.ClientAuthType)
	}
	p.clientAuth = ca
	if len(o.ClientAuth.CAFiles) > 0 {
		p.clientCAs = x509.NewCertPool()
		for i, f := range o.ClientAuth.CAFiles {
			b, err := PEMOrFile(f)
			if err != nil {
				return nil, nil, fmt.Errorf("clientAuth.caFiles[%d]: %w", i, err)
			}
			if !p.clientCAs.AppendCertsFromPEM(b) {
				return nil, nil, fmt.Errorf("clientAuth.caFiles[%d]: no PEM certificate in %s", i, describePEM(f))
			}
		}
	}
	p.sniStrict = o.SniStrict
	if len(o.ALPNProtocols) > 0 {
		p.alpn = o.ALPNProtocols
	}
	p.noTickets = o.DisableSessionTickets
	return p, warnings, nil
}

// clientAuthByName maps Traefik's clientAuthType names (crypto/tls's
// constant names; "" is NoClientCert) to their values.
var clientAuthByName = map[string]tls.ClientAuthType{
	"": tls.NoClientCert, "NoClientCert": tls.NoClientCert,
	"RequestClientCert": tls.RequestClientCert, "RequireAnyClientCert": tls.RequireAnyClientCert,
	"VerifyClientCertIfGiven": tls.VerifyClientCertIfGiven, "RequireAndVerifyClientCert": tls.RequireAndVerifyClientCert,
}

var curveByName = map[string]tls.CurveID{
	"CurveP256": tls.CurveP256, "secp256r1": tls.CurveP256,
	"CurveP384": tls.CurveP384, "secp384r1": tls.CurveP384,
	"CurveP521": tls.CurveP521, "secp521r1": tls.CurveP521,
	"X25519": tls.X25519, "X25519MLKEM768": tls.X25519MLKEM768,
}

// Config returns the server tls.Config of the policy, built once so that
// its session ticket keys (and so resumption) stay stable for the
// generation. Its certificate is the one the server chose for the
// connection, read back from the connection's Handshake (Cert).
func (p *Policy) Config() *tls.Config {
	p.once.Do(func() {
		p.conf = &tls.Config{
			MinVersion:             p.minVersion,
			MaxVersion:             p.maxVersion,
			CipherSuites:           p.ciphers,
			CurvePreferences:       p.curves,
			ClientAuth:             p.clientAuth,
			ClientCAs:              p.clientCAs,
			NextProtos:             p.alpn,
			SessionTicketsDisabled: p.noTickets,
			GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
				if hs := p.conn.of(hello); hs != nil && hs.Cert != nil {
					return hs.Cert, nil
				}
				return nil, errors.New("tls: no certificate")
			},
		}
		// Explicit keys: otherwise crypto/tls falls back to the keys of
		// the listener's own config, which differ between the per-core
		// servers, and resumption would fail half the time. The keys live
		// as long as the generation.
		var key [32]byte
		if _, err := rand.Read(key[:]); err == nil {
			p.conf.SetSessionTicketKeys([][32]byte{key})
		}
	})
	return p.conf
}

// policyFor returns the policy for an SNI name on an entrypoint: the
// options of the entrypoint's routers for that host (exact, then the
// wildcard covering its first label), else the default.
func (s *Store) policyFor(entryPoint, name string) *Policy {
	hosts := s.policies[entryPoint]
	if p, ok := hosts[name]; ok {
		return p
	}
	if i := strings.IndexByte(name, '.'); i > 0 {
		if p, ok := hosts["*"+name[i:]]; ok {
			return p
		}
	}
	return s.defPolicy
}

// Policy returns the policy of the tls.options called name ("default":
// the default one), or nil when there is none.
func (s *Store) Policy(name string) *Policy {
	if name == "default" {
		return s.defPolicy
	}
	return s.byName[name]
}

// errSNIStrict fails a handshake that names no known host under sniStrict.
var errSNIStrict = errors.New("tls: no certificate for the requested server name (sniStrict)")

// Handshake is what the certificate store and a Policy's tls.Config share
// about one TLS handshake on a server connection: the TLS options the
// store chose for the SNI name (Policy, written by Store.Certificate) and
// the certificate the server chose (Cert, which Policy.Config serves). The
// server keeps one per connection; both are written once, during the
// handshake, before any request.
type Handshake struct {
	// EntryPoint is the entrypoint the connection came to (set by the
	// server before the handshake): TLS options are chosen per
	// entrypoint.
	EntryPoint string
	Policy     *Policy
	Cert       *tls.Certificate
}

// ConnOf returns the Handshake of the server connection a handshake runs
// on, or nil when it runs on none.
type ConnOf func(*tls.ClientHelloInfo) *Handshake

func (f ConnOf) of(hello *tls.ClientHelloInfo) *Handshake {
	if f == nil {
		return nil
	}
	return f(hello)
}
