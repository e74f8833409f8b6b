package config

// TLSConfiguration holds certificates, named TLS options and certificate stores.
// Source: https://doc.traefik.io/traefik/https/tls/
type TLSConfiguration struct {
	Certificates []*CertAndStores       `json:"certificates,omitempty"`
	Options      map[string]*TLSOptions `json:"options,omitempty"`
	Stores       map[string]*TLSStore   `json:"stores,omitempty"`
}

// Certificate is a certificate and its key, each a file path or inline PEM.
type Certificate struct {
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
}

// CertAndStores is a certificate and the stores it belongs to (default: "default").
type CertAndStores struct {
	Certificate
	Stores []string `json:"stores,omitempty"`
}

// TLSOptions is a named set of TLS parameters routers refer to by name.
// MinVersion and MaxVersion are "VersionTLS12" or "VersionTLS13".
type TLSOptions struct {
	MinVersion               string     `json:"minVersion,omitempty"`
	MaxVersion               string     `json:"maxVersion,omitempty"`
	CipherSuites             []string   `json:"cipherSuites,omitempty"`
	CurvePreferences         []string   `json:"curvePreferences,omitempty"`
	ClientAuth               ClientAuth `json:"clientAuth,omitempty"`
	SniStrict                bool       `json:"sniStrict,omitempty"`
	ALPNProtocols            []string   `json:"alpnProtocols,omitempty"`
	DisableSessionTickets    bool       `json:"disableSessionTickets,omitempty"`
	PreferServerCipherSuites *bool      `json:"preferServerCipherSuites,omitempty"`
}

// ClientAuth configures client certificate verification.
// ClientAuthType is one of Go's tls.ClientAuthType names (NoClientCert,
// RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven,
// RequireAndVerifyClientCert).
type ClientAuth struct {
	CAFiles        []string `json:"caFiles,omitempty"`
	ClientAuthType string   `json:"clientAuthType,omitempty"`
}

// TLSStore holds the default certificate of a store.
type TLSStore struct {
	DefaultCertificate   *Certificate   `json:"defaultCertificate,omitempty"`
	DefaultGeneratedCert *GeneratedCert `json:"defaultGeneratedCert,omitempty"`
}

// GeneratedCert asks for the default certificate to come from a resolver.
type GeneratedCert struct {
	Resolver string  `json:"resolver,omitempty"`
	Domain   *Domain `json:"domain,omitempty"`
}

// ClientTLS configures a TLS client (forwardAuth, providers' endpoints).
type ClientTLS struct {
	CA                 string `json:"ca,omitempty"`
	Cert               string `json:"cert,omitempty"`
	Key                string `json:"key,omitempty"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
}
