package certs

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/rule"
)

// Policy is one resolved TLS options set (tls.options.<name>): what a
// handshake for a host whose routers name it is allowed to negotiate.
// Source: https://doc.traefik.io/traefik/https/tls/#tls-options
type Policy struct {
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
	return &Policy{minVersion: tls.VersionTLS12, alpn: []string{"h2", "http/1.1"}, conn: conn}
}

// newPolicy resolves o. Errors name the bad field.
func newPolicy(o *config.TLSOptions, conn ConnOf) (*Policy, error) {
	p := DefaultPolicy(conn)
	if o == nil {
		return p, nil
	}
	v, err := tlsVersions(o)
	if err != nil {
		return nil, err
	}
	if v[0] != 0 {
		p.minVersion = v[0]
	}
	p.maxVersion = v[1]
	if len(o.CipherSuites) > 0 {
		byName := map[string]uint16{}
		for _, s := range slices.Concat(tls.CipherSuites(), tls.InsecureCipherSuites()) {
			byName[s.Name] = s.ID
		}
		for _, n := range o.CipherSuites {
			id, ok := byName[n]
			if !ok {
				return nil, fmt.Errorf("cipherSuites: unknown suite %q", n)
			}
			p.ciphers = append(p.ciphers, id)
		}
	}
	for _, n := range o.CurvePreferences {
		id, ok := curveByName[n]
		if !ok {
			return nil, fmt.Errorf("curvePreferences: unknown curve %q", n)
		}
		p.curves = append(p.curves, id)
	}
	switch o.ClientAuth.ClientAuthType {
	case "", "NoClientCert":
	case "RequestClientCert":
		p.clientAuth = tls.RequestClientCert
	case "RequireAnyClientCert":
		p.clientAuth = tls.RequireAnyClientCert
	case "VerifyClientCertIfGiven":
		p.clientAuth = tls.VerifyClientCertIfGiven
	case "RequireAndVerifyClientCert":
		p.clientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("clientAuth.clientAuthType: unknown type %q", o.ClientAuth.ClientAuthType)
	}
	if len(o.ClientAuth.CAFiles) > 0 {
		p.clientCAs = x509.NewCertPool()
		for i, f := range o.ClientAuth.CAFiles {
			b, err := PEMOrFile(f)
			if err != nil {
				return nil, fmt.Errorf("clientAuth.caFiles[%d]: %w", i, err)
			}
			if !p.clientCAs.AppendCertsFromPEM(b) {
				return nil, fmt.Errorf("clientAuth.caFiles[%d]: no PEM certificate in %s", i, describePEM(f))
			}
		}
	}
	p.sniStrict = o.SniStrict
	if len(o.ALPNProtocols) > 0 {
		p.alpn = o.ALPNProtocols
	}
	p.noTickets = o.DisableSessionTickets
	return p, nil
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

// RouterHosts returns the host names a router's TLS applies to: the
// arguments of Host() in its rule and its tls.domains, lower-cased.
func RouterHosts(r *config.Router) []string {
	var hosts []string
	if t, err := rule.Parse(r.Rule); err == nil {
		_ = t.Walk(func(c *rule.Tree) error {
			if strings.EqualFold(c.Name, "Host") {
				for _, a := range c.Args {
					hosts = append(hosts, strings.ToLower(a))
				}
			}
			return nil
		})
	}
	if r.TLS != nil {
		for _, d := range r.TLS.Domains {
			if d.Main != "" {
				hosts = append(hosts, strings.ToLower(d.Main))
			}
			for _, s := range d.SANs {
				hosts = append(hosts, strings.ToLower(s))
			}
		}
	}
	return hosts
}

// policyFor returns the policy for an SNI name: the options of the routers
// for that host (exact, then wildcard), else the default.
func (s *Store) policyFor(name string) *Policy {
	if p, ok := s.policies[name]; ok {
		return p
	}
	if i := strings.IndexByte(name, '.'); i > 0 {
		if p, ok := s.policies["*"+name[i:]]; ok {
			return p
		}
	}
	return s.defPolicy
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
	Policy *Policy
	Cert   *tls.Certificate
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
