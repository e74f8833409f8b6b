package static

import "github.com/gantry-proxy/gantry/config"

// CertificateResolver is certificatesResolvers.<name>: a source of
// certificates routers name in tls.certResolver. Only acme is supported
// (Traefik's tailscale resolver is not).
// Source: https://doc.traefik.io/traefik/reference/install-configuration/tls/certificate-resolvers/acme/
type CertificateResolver struct {
	ACME *ACME `json:"acme,omitempty"`
}

// ACME is certificatesResolvers.<name>.acme, with Traefik's names.
//
// Defaults: caServer Let's Encrypt production
// (https://acme-v02.api.letsencrypt.org/directory); storage "acme.json"
// (Gantry keeps accounts and certificates in its own store, and imports the
// file once when it exists, see providers/acme); keyType EC256 (Traefik's
// default is RSA4096; an ECDSA P-256 key makes handshakes several times
// cheaper); certificatesDuration 2160 hours (90 days), which only decides
// when to renew; clientTimeout 2m; clientResponseHeaderTimeout 30s.
// Exactly one challenge must be set: httpChallenge, tlsChallenge or
// dnsChallenge.
type ACME struct {
	Email          string `json:"email,omitempty"`
	CAServer       string `json:"caServer,omitempty"`
	PreferredChain string `json:"preferredChain,omitempty"`
	// Storage is the path of a Traefik acme.json to import, or
	// "consul://<key prefix>" to keep accounts and certificates in Consul KV
	// (shared by several instances; providers.consul's endpoint is used),
	// or "kubernetes://[namespace]/<secret>" to keep them in a Kubernetes
	// Secret with a Lease per domain (shared by several replicas).
	Storage string `json:"storage,omitempty"`
	// KeyType is EC256 (default), EC384, RSA2048, RSA3072, RSA4096 or RSA8192.
	KeyType string `json:"keyType,omitempty"`
	EAB     *EAB   `json:"eab,omitempty"`
	// CertificatesDuration is the lifetime of the CA's certificates in hours
	// (default 2160); it chooses how long before expiry a renewal starts.
	CertificatesDuration int `json:"certificatesDuration,omitempty"`
	// Profile is the ACME profile to request (draft-ietf-acme-profiles).
	Profile string `json:"profile,omitempty"`
	// EmailAddresses are added to the CSR (as Traefik's emailAddresses).
	EmailAddresses []string `json:"emailAddresses,omitempty"`
	// DisableCommonName leaves the subject common name out of the CSR.
	DisableCommonName           bool             `json:"disableCommonName,omitempty"`
	ClientTimeout               *config.Duration `json:"clientTimeout,omitempty"`
	ClientResponseHeaderTimeout *config.Duration `json:"clientResponseHeaderTimeout,omitempty"`
	// CACertificates are PEM files of the roots that sign the CA server's
	// HTTPS certificate; with CASystemCertPool the system roots are added.
	CACertificates   []string       `json:"caCertificates,omitempty"`
	CASystemCertPool bool           `json:"caSystemCertPool,omitempty"`
	CAServerName     string         `json:"caServerName,omitempty"`
	HTTPChallenge    *HTTPChallenge `json:"httpChallenge,omitempty"`
	TLSChallenge     *TLSChallenge  `json:"tlsChallenge,omitempty"`
	DNSChallenge     *DNSChallenge  `json:"dnsChallenge,omitempty"`
}

// EAB is external account binding (RFC 8555 §7.3.4): the key identifier
// and the base64url HMAC key the CA gave.
type EAB struct {
	Kid         string `json:"kid,omitempty"`
	HmacEncoded string `json:"hmacEncoded,omitempty"`
}

// HTTPChallenge answers HTTP-01 on EntryPoint (which must be reachable on
// port 80 by the CA). Delay waits between publishing the token and asking
// the CA to validate.
type HTTPChallenge struct {
	EntryPoint string          `json:"entryPoint,omitempty"`
	Delay      config.Duration `json:"delay,omitempty"`
}

// TLSChallenge answers TLS-ALPN-01 (RFC 8737) on every TLS entrypoint; it
// has no options.
type TLSChallenge struct{}

// DNSChallenge answers DNS-01 through a DNS provider (lego's code names,
// as Traefik: cloudflare, route53, rfc2136, …), configured by the
// provider's own environment variables.
type DNSChallenge struct {
	Provider    string       `json:"provider,omitempty"`
	Resolvers   []string     `json:"resolvers,omitempty"`
	Propagation *Propagation `json:"propagation,omitempty"`
	// DelayBeforeCheck and DisablePropagationCheck are Traefik's deprecated
	// spellings of propagation.delayBeforeChecks and disableChecks.
	DelayBeforeCheck        config.Duration `json:"delayBeforeCheck,omitempty"`
	DisablePropagationCheck bool            `json:"disablePropagationCheck,omitempty"`
}

// Propagation tunes the DNS-01 propagation check.
type Propagation struct {
	DisableChecks     bool            `json:"disableChecks,omitempty"`
	DisableANSChecks  bool            `json:"disableANSChecks,omitempty"`
	RequireAllRNS     bool            `json:"requireAllRNS,omitempty"`
	DelayBeforeChecks config.Duration `json:"delayBeforeChecks,omitempty"`
}
