package acme

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-acme/lego/v5/acme"
	"github.com/go-acme/lego/v5/certcrypto"
	"github.com/go-acme/lego/v5/certificate"
	"github.com/go-acme/lego/v5/challenge"
	"github.com/go-acme/lego/v5/challenge/dns01"
	"github.com/go-acme/lego/v5/challenge/http01"
	"github.com/go-acme/lego/v5/lego"
	"github.com/go-acme/lego/v5/registration"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
)

// DefaultCAServer is Let's Encrypt's production directory (Traefik's
// default caServer).
const DefaultCAServer = "https://acme-v02.api.letsencrypt.org/directory"

// DefaultKeyType is the certificate key type when keyType is empty:
// ECDSA P-256 (Traefik's default is RSA4096, several times slower per
// handshake).
const DefaultKeyType = certcrypto.EC256

// defaultCertificatesDuration is Traefik's certificatesDuration default, in
// hours (90 days).
const defaultCertificatesDuration = 2160

// resolver is one certificatesResolvers.<name>.acme.
type resolver struct {
	name     string
	cfg      *static.ACME
	caServer string
	keyType  certcrypto.KeyType
	http     *http.Client
	dns      challenge.Provider // nil without dnsChallenge
	// renewBefore is how long before expiry a renewal starts, from
	// certificatesDuration (Traefik's table).
	renewBefore time.Duration

	// kv keeps the resolver's data: Gantry's store, or Consul KV (shared by
	// several instances) for a consul:// storage.
	kv KV

	mu  sync.Mutex // guards cli (building it registers the account)
	cli *lego.Client
}

// newResolver checks c and prepares the resolver. Errors name the option.
func newResolver(name string, c *static.ACME, entryPoints map[string]*static.EntryPoint, log *slog.Logger) (*resolver, error) {
	p := "certificatesResolvers." + name + ".acme"
	r := &resolver{name: name, cfg: c, caServer: c.CAServer, keyType: DefaultKeyType}
	if r.caServer == "" {
		r.caServer = DefaultCAServer
	}
	if u, err := url.Parse(r.caServer); err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%s.caServer %q: want an https:// directory URL", p, r.caServer)
	}
	if c.KeyType != "" {
		kt, err := certcrypto.ToKeyType(c.KeyType)
		if err != nil {
			return nil, fmt.Errorf("%s.keyType %q: want EC256, EC384, RSA2048, RSA3072, RSA4096 or RSA8192", p, c.KeyType)
		}
		r.keyType = kt
	}
	if c.HTTPChallenge == nil && c.TLSChallenge == nil && c.DNSChallenge == nil {
		return nil, fmt.Errorf("%s: no challenge: set httpChallenge, tlsChallenge or dnsChallenge", p)
	}
	if h := c.HTTPChallenge; h != nil {
		if h.EntryPoint == "" {
			return nil, fmt.Errorf("%s.httpChallenge.entryPoint is empty", p)
		}
		if _, ok := entryPoints[h.EntryPoint]; !ok {
			return nil, fmt.Errorf("%s.httpChallenge.entryPoint: no entrypoint %q", p, h.EntryPoint)
		}
	}
	if d := c.DNSChallenge; d != nil {
		dp, err := newDNSProvider(d.Provider, d.Resolvers, log.With("resolver", name))
		if err != nil {
			return nil, fmt.Errorf("%s.dnsChallenge.provider: %w", p, err)
		}
		r.dns = dp
		if len(d.Resolvers) > 0 {
			// lego keeps the resolvers process-wide: with several DNS-01
			// resolvers, the last one's list is used by all.
			opts := dns01.NewOptions()
			opts.RecursiveNameservers = d.Resolvers
			dns01.SetDefaultClient(dns01.NewClient(opts))
		}
	}
	if c.EAB != nil && (c.EAB.Kid == "" || c.EAB.HmacEncoded == "") {
		return nil, fmt.Errorf("%s.eab: set both kid and hmacEncoded", p)
	}
	dur := c.CertificatesDuration
	if dur <= 0 {
		dur = defaultCertificatesDuration
	}
	r.renewBefore = renewPeriod(dur)
	hc, err := caClient(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	r.http = hc
	return r, nil
}

// caClient builds the HTTP client for the CA: clientTimeout (default 2m),
// clientResponseHeaderTimeout (30s), caCertificates / caSystemCertPool /
// caServerName (else lego's LEGO_CA_CERTIFICATES, LEGO_CA_SERVER_NAME).
func caClient(c *static.ACME) (*http.Client, error) {
	timeout, header := 2*time.Minute, 30*time.Second
	if c.ClientTimeout != nil {
		timeout = c.ClientTimeout.D()
	}
	if c.ClientResponseHeaderTimeout != nil {
		header = c.ClientResponseHeaderTimeout.D()
	}
	files := c.CACertificates
	system := c.CASystemCertPool
	if len(files) == 0 && os.Getenv("LEGO_CA_CERTIFICATES") != "" {
		files = strings.Split(os.Getenv("LEGO_CA_CERTIFICATES"), string(os.PathListSeparator))
		system = system || os.Getenv("LEGO_CA_SYSTEM_CERT_POOL") == "true"
	}
	serverName := c.CAServerName
	if serverName == "" {
		serverName = os.Getenv("LEGO_CA_SERVER_NAME")
	}
	var roots *x509.CertPool
	if len(files) > 0 {
		roots = x509.NewCertPool()
		if system {
			if sp, err := x509.SystemCertPool(); err == nil {
				roots = sp
			}
		}
		for i, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("caCertificates[%d]: %w", i, err)
			}
			if !roots.AppendCertsFromPEM(b) {
				return nil, fmt.Errorf("caCertificates[%d]: no PEM certificate in %s", i, f)
			}
		}
	}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   30 * time.Second,
			ResponseHeaderTimeout: header,
			TLSClientConfig:       &tls.Config{ServerName: serverName, RootCAs: roots, MinVersion: tls.VersionTLS12},
			MaxIdleConnsPerHost:   2,
			IdleConnTimeout:       90 * time.Second,
		},
	}, nil
}

// renewPeriod is how long before expiry a certificate of the given
// lifetime (certificatesDuration, hours) is renewed: Traefik's table
// (pkg/provider/acme renewal durations).
func renewPeriod(hours int) time.Duration {
	switch {
	case hours >= 365*24:
		return 4 * 30 * 24 * time.Hour
	case hours >= 3*30*24:
		return 30 * 24 * time.Hour
	case hours >= 30*24:
		return 10 * 24 * time.Hour
	case hours >= 6*24:
		return 2 * 24 * time.Hour
	case hours >= 24:
		return 6 * time.Hour
	default:
		return 20 * time.Minute
	}
}

// renewAt is when leaf is due for renewal: renewBefore ahead of expiry, but
// never later than two thirds into the certificate's real lifetime (a CA
// that issues shorter certificates than certificatesDuration says is
// renewed in time; Traefik would let them expire).
func (r *resolver) renewAt(leaf *x509.Certificate) time.Time {
	before := r.renewBefore
	if life := leaf.NotAfter.Sub(leaf.NotBefore); life/3 < before {
		before = life / 3
	}
	return leaf.NotAfter.Add(-before)
}

// client returns the resolver's ACME client, registering the account
// first when it has none (acct is the stored account, possibly nil; the
// returned account is the one to store when changed is true).
func (r *resolver) client(ctx context.Context, acct *Account, chal *challenges, shared sharedKV, userAgent string) (cli *lego.Client, out *Account, changed bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cli != nil {
		return r.cli, acct, false, nil
	}
	if acct != nil && acct.Registration != nil && !sameHost(acct.Registration.URI, r.caServer) {
		acct = nil // another CA: a new account (Traefik does the same)
	}
	if acct != nil {
		cp := *acct // shared with Run's state: changed only as a copy
		acct = &cp
	}
	if acct == nil || acct.key == nil {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, false, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, nil, false, err
		}
		acct = &Account{Email: r.cfg.Email, PrivateKey: der, KeyType: string(r.keyType), key: key}
		changed = true
	}
	lc := lego.NewConfig(acct)
	lc.CADirURL = r.caServer
	lc.HTTPClient = r.http
	lc.UserAgent = userAgent
	cli, err = lego.NewClient(lc)
	if err != nil {
		return nil, nil, false, fmt.Errorf("CA %s: %w", r.caServer, err)
	}
	if acct.Registration == nil {
		res, err := r.register(ctx, cli.Registration)
		if err != nil {
			return nil, nil, false, fmt.Errorf("register account: %w", err)
		}
		acct.Registration = &Registration{Body: res.Account, URI: res.Location}
		changed = true
	}
	if h := r.cfg.HTTPChallenge; h != nil {
		if err := cli.Challenge.SetHTTP01Provider(http01Provider{c: chal, entryPoint: h.EntryPoint, shared: shared}, http01.SetDelay(h.Delay.D())); err != nil {
			return nil, nil, false, err
		}
	}
	if r.cfg.TLSChallenge != nil {
		if err := cli.Challenge.SetTLSALPN01Provider(tlsALPN01{c: chal, shared: shared}); err != nil {
			return nil, nil, false, err
		}
	}
	if d := r.cfg.DNSChallenge; d != nil {
		if err := cli.Challenge.SetDNS01Provider(r.dns, dnsOptions(d)...); err != nil {
			return nil, nil, false, err
		}
	}
	r.cli = cli
	return cli, acct, changed, nil
}

func (r *resolver) register(ctx context.Context, reg *registration.Registrar) (*acme.ExtendedAccount, error) {
	if e := r.cfg.EAB; e != nil {
		return reg.RegisterWithExternalAccountBinding(ctx, registration.RegisterEABOptions{TermsOfServiceAgreed: true, Kid: e.Kid, HmacEncoded: e.HmacEncoded})
	}
	return reg.Register(ctx, registration.RegisterOptions{TermsOfServiceAgreed: true})
}

// needsAccount reports whether client would create or register an
// account for acct (the stored account, possibly nil).
func (r *resolver) needsAccount(acct *Account) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cli != nil {
		return false
	}
	return acct == nil || acct.key == nil || acct.Registration == nil || !sameHost(acct.Registration.URI, r.caServer)
}

// reset drops the client so the next order builds a new one (after an
// error that may come from a stale account or directory).
func (r *resolver) reset() {
	r.mu.Lock()
	r.cli = nil
	r.mu.Unlock()
}

// dnsOptions maps dnsChallenge.resolvers and propagation.* to lego.
func dnsOptions(d *static.DNSChallenge) []dns01.ChallengeOption {
	var opts []dns01.ChallengeOption
	p := d.Propagation
	if p == nil {
		p = &static.Propagation{}
	}
	delay := p.DelayBeforeChecks.D()
	if delay == 0 {
		delay = d.DelayBeforeCheck.D()
	}
	disable := p.DisableChecks || d.DisablePropagationCheck
	if p.DisableANSChecks {
		opts = append(opts, dns01.DisableAuthoritativeNssPropagationRequirement())
	}
	if !p.RequireAllRNS {
		opts = append(opts, dns01.DisableRecursiveNSsPropagationRequirement())
	}
	if delay > 0 || disable {
		opts = append(opts, dns01.PropagationWait(delay, disable))
	}
	return opts
}

// obtain orders a certificate for d.
func (r *resolver) obtain(ctx context.Context, cli *lego.Client, d config.Domain) (*certificate.Resource, error) {
	res, err := cli.Certificate.Obtain(ctx, certificate.ObtainRequest{
		Domains:          domainNames(d),
		Bundle:           true,
		KeyType:          r.keyType,
		PreferredChain:   r.cfg.PreferredChain,
		Profile:          r.cfg.Profile,
		EmailAddresses:   r.cfg.EmailAddresses,
		EnableCommonName: !r.cfg.DisableCommonName,
	})
	if err != nil {
		return nil, err
	}
	if res == nil || len(res.Certificate) == 0 || len(res.PrivateKey) == 0 {
		return nil, errors.New("the CA returned an empty certificate")
	}
	return res, nil
}

func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Hostname() == ub.Hostname()
}
