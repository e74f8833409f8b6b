package crd

import "github.com/gantry-proxy/gantry/config"

// TraefikServiceSpec is a service of services; exactly one field is set.
// Source: https://doc.traefik.io/traefik/v3.7/reference/routing-configuration/kubernetes/crd/http/traefikservice/
type TraefikServiceSpec struct {
	Weighted            *Weighted  `json:"weighted,omitempty"`
	Mirroring           *Mirroring `json:"mirroring,omitempty"`
	HighestRandomWeight *HRW       `json:"highestRandomWeight,omitempty"`
	Failover            *Failover  `json:"failover,omitempty"`
}

// Weighted splits requests over Services by weight (default 1).
type Weighted struct {
	Services []Service      `json:"services,omitempty"`
	Sticky   *config.Sticky `json:"sticky,omitempty"`
}

// HRW sends each client to one Service by rendezvous hashing.
type HRW struct {
	Services []Service `json:"services,omitempty"`
}

// Mirroring sends every request to the inline Service and a percentage to
// each mirror.
type Mirroring struct {
	Service     `json:",inline"`
	MirrorBody  *bool           `json:"mirrorBody,omitempty"`
	MaxBodySize *int64          `json:"maxBodySize,omitempty"`
	Mirrors     []MirrorService `json:"mirrors,omitempty"`
}

// MirrorService is one mirror and its percentage (0–100).
type MirrorService struct {
	Service `json:",inline"`
	Percent int `json:"percent,omitempty"`
}

// Failover uses Fallback while Service has no available server, or for the
// answers whose status is in Errors.Status. Errors has the dynamic
// configuration's form.
type Failover struct {
	Service  Service               `json:"service" crd:"required"`
	Fallback Service               `json:"fallback" crd:"required"`
	Errors   config.FailoverErrors `json:"errors" crd:"required"`
}

// TLSOptionSpec is a named set of TLS parameters: the dynamic
// configuration's TLS options, except that ClientAuth.SecretNames are
// Secrets holding client CAs (key tls.ca or ca.crt) where the file
// provider has CA files (the ClientAuth declared here hides the embedded
// one, for encoding/json as for the schema). A TLSOption named "default"
// (in one namespace only) replaces the default options.
// Source: https://doc.traefik.io/traefik/v3.7/reference/routing-configuration/kubernetes/crd/tls/tlsoption/
type TLSOptionSpec struct {
	config.TLSOptions `json:",inline"`
	ClientAuth        ClientAuth `json:"clientAuth,omitzero"`
}

// ClientAuth is a TLSOption's client certificate policy.
type ClientAuth struct {
	SecretNames    []string `json:"secretNames,omitempty"`
	ClientAuthType string   `json:"clientAuthType,omitempty" crd:"enum=NoClientCert|RequestClientCert|RequireAnyClientCert|VerifyClientCertIfGiven|RequireAndVerifyClientCert"`
}

// TLSStoreSpec is a certificate store (only "default" is used by routers):
// its default certificate and extra certificates, each from a Secret.
// Source: https://doc.traefik.io/traefik/v3.7/reference/routing-configuration/kubernetes/crd/tls/tlsstore/
type TLSStoreSpec struct {
	DefaultCertificate   *SecretRef            `json:"defaultCertificate,omitempty"`
	DefaultGeneratedCert *config.GeneratedCert `json:"defaultGeneratedCert,omitempty"`
	Certificates         []SecretRef           `json:"certificates,omitempty"`
}

// SecretRef names a kubernetes.io/tls Secret (keys tls.crt and tls.key) in
// the referring object's namespace.
type SecretRef struct {
	SecretName string `json:"secretName" crd:"required"`
}

// ServersTransportSpec is how Gantry connects to HTTP servers: the TLS
// client fields a ServersTransportTCP has under tls (CA and client
// certificates from Secrets and ConfigMaps of the same namespace), and the
// HTTP ones. CipherSuites, MinVersion, MaxVersion, PeerCertSANs and Spiffe
// are Traefik fields Gantry does not implement (a Problem when set).
// Source: https://doc.traefik.io/traefik/v3.7/reference/routing-configuration/kubernetes/crd/http/serverstransport/
type ServersTransportSpec struct {
	TLSClientConfig     `json:",inline"`
	CipherSuites        []string                   `json:"cipherSuites,omitempty"`
	MinVersion          string                     `json:"minVersion,omitempty"`
	MaxVersion          string                     `json:"maxVersion,omitempty"`
	MaxIdleConnsPerHost int                        `json:"maxIdleConnsPerHost,omitempty" crd:"min=-1"`
	ForwardingTimeouts  *config.ForwardingTimeouts `json:"forwardingTimeouts,omitempty"`
	DisableHTTP2        bool                       `json:"disableHTTP2,omitempty"`
}

// RootCA is a CA from a Secret or a ConfigMap (key tls.ca or ca.crt).
type RootCA struct {
	Secret    *string `json:"secret,omitempty"`
	ConfigMap *string `json:"configMap,omitempty"`
}

// SAN is a subject alternative name a server certificate must carry.
type SAN struct {
	Type  string `json:"type,omitempty"`
	Value string `json:"value,omitempty"`
}

// Spiffe is Traefik's SPIFFE server verification.
type Spiffe struct {
	IDs         []string `json:"ids,omitempty"`
	TrustDomain string   `json:"trustDomain,omitempty"`
}

// ServersTransportTCPSpec is how Gantry connects to TCP servers.
// Source: https://doc.traefik.io/traefik/v3.7/reference/routing-configuration/kubernetes/crd/tcp/serverstransporttcp/
type ServersTransportTCPSpec struct {
	DialTimeout      *config.Duration      `json:"dialTimeout,omitempty"`
	DialKeepAlive    *config.Duration      `json:"dialKeepAlive,omitempty"`
	ProxyProtocol    *config.ProxyProtocol `json:"proxyProtocol,omitempty"`
	TerminationDelay *config.Duration      `json:"terminationDelay,omitempty"`
	TLS              *TLSClientConfig      `json:"tls,omitempty"`
}

// TLSClientConfig is the TLS towards the servers: a ServersTransportTCP's
// tls, and the first fields of a ServersTransport.
type TLSClientConfig struct {
	ServerName          string   `json:"serverName,omitempty"`
	InsecureSkipVerify  bool     `json:"insecureSkipVerify,omitempty"`
	RootCAs             []RootCA `json:"rootCAs,omitempty"`
	RootCAsSecrets      []string `json:"rootCAsSecrets,omitempty"`
	CertificatesSecrets []string `json:"certificatesSecrets,omitempty"`
	PeerCertURI         string   `json:"peerCertURI,omitempty"`
	PeerCertSANs        []SAN    `json:"peerCertSANs,omitempty"`
	Spiffe              *Spiffe  `json:"spiffe,omitempty"`
}
