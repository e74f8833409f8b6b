package crd

import (
	"encoding/json"

	"github.com/gantry-proxy/gantry/config"
)

// MiddlewareSpec is one HTTP middleware; exactly one field is set. The
// kinds whose Traefik CRD form equals the dynamic configuration reuse the
// config types; the others reference Kubernetes objects (Secrets, other
// Middlewares, Services) and are resolved by the translation.
// Source: https://doc.traefik.io/traefik/v3.7/reference/routing-configuration/kubernetes/crd/http/middleware/
type MiddlewareSpec struct {
	AddPrefix         *config.AddPrefix         `json:"addPrefix,omitempty"`
	StripPrefix       *config.StripPrefix       `json:"stripPrefix,omitempty"`
	StripPrefixRegex  *config.StripPrefixRegex  `json:"stripPrefixRegex,omitempty"`
	ReplacePath       *config.ReplacePath       `json:"replacePath,omitempty"`
	ReplacePathRegex  *config.ReplacePathRegex  `json:"replacePathRegex,omitempty"`
	Chain             *Chain                    `json:"chain,omitempty"`
	IPWhiteList       *config.IPAllowList       `json:"ipWhiteList,omitempty"`
	IPAllowList       *config.IPAllowList       `json:"ipAllowList,omitempty"`
	Headers           *Headers                  `json:"headers,omitempty"`
	EncodedCharacters *config.EncodedCharacters `json:"encodedCharacters,omitempty"`
	Errors            *ErrorPage                `json:"errors,omitempty"`
	RateLimit         *RateLimit                `json:"rateLimit,omitempty"`
	RedirectRegex     *config.RedirectRegex     `json:"redirectRegex,omitempty"`
	RedirectScheme    *config.RedirectScheme    `json:"redirectScheme,omitempty"`
	BasicAuth         *AuthSecret               `json:"basicAuth,omitempty"`
	DigestAuth        *AuthSecret               `json:"digestAuth,omitempty"`
	ForwardAuth       *ForwardAuth              `json:"forwardAuth,omitempty"`
	InFlightReq       *config.InFlightReq       `json:"inFlightReq,omitempty"`
	Buffering         *config.Buffering         `json:"buffering,omitempty"`
	CircuitBreaker    *config.CircuitBreaker    `json:"circuitBreaker,omitempty"`
	Compress          *config.Compress          `json:"compress,omitempty"`
	PassTLSClientCert *config.PassTLSClientCert `json:"passTLSClientCert,omitempty"`
	Retry             *config.Retry             `json:"retry,omitempty"`
	ContentType       *config.ContentType       `json:"contentType,omitempty"`
	GrpcWeb           *config.GrpcWeb           `json:"grpcWeb,omitempty"`
	// Plugin is accepted by the schema (any JSON) so that Traefik's
	// objects apply; Gantry runs no plugins, and the translation says so.
	Plugin map[string]json.RawMessage `json:"plugin,omitempty"`
}

// Chain lists other Middlewares, applied in order.
type Chain struct {
	Middlewares []ObjectRef `json:"middlewares,omitempty"`
}

// Headers is the headers middleware with Traefik's deprecated fields,
// which Gantry does not implement: setting one is a Problem that names it.
type Headers struct {
	config.Headers       `json:",inline"`
	FeaturePolicy        *string `json:"featurePolicy,omitempty"`
	SSLRedirect          *bool   `json:"sslRedirect,omitempty"`
	SSLTemporaryRedirect *bool   `json:"sslTemporaryRedirect,omitempty"`
	SSLHost              *string `json:"sslHost,omitempty"`
	SSLForceHost         *bool   `json:"sslForceHost,omitempty"`
}

// ErrorPage is the errors middleware of the dynamic configuration, except
// that Service is the Kubernetes Service (or TraefikService) serving the
// error pages (the Service declared here hides the embedded one, for
// encoding/json as for the schema).
type ErrorPage struct {
	config.ErrorPage `json:",inline"`
	Service          Service `json:"service,omitzero"`
}

// RateLimit is the rateLimit middleware; Redis credentials come from a
// Secret (keys username and password).
type RateLimit struct {
	Average         *int64                  `json:"average,omitempty" crd:"min=0"`
	Period          *config.Duration        `json:"period,omitempty"`
	Burst           *int64                  `json:"burst,omitempty" crd:"min=0"`
	SourceCriterion *config.SourceCriterion `json:"sourceCriterion,omitempty"`
	Redis           *Redis                  `json:"redis,omitempty"`
}

// Redis is rateLimit.redis with credentials from Secret.
type Redis struct {
	Endpoints      []string         `json:"endpoints,omitempty"`
	TLS            *ClientTLS       `json:"tls,omitempty"`
	Secret         string           `json:"secret,omitempty"`
	DB             int              `json:"db,omitempty"`
	PoolSize       int              `json:"poolSize,omitempty"`
	MinIdleConns   int              `json:"minIdleConns,omitempty"`
	MaxActiveConns int              `json:"maxActiveConns,omitempty"`
	ReadTimeout    *config.Duration `json:"readTimeout,omitempty"`
	WriteTimeout   *config.Duration `json:"writeTimeout,omitempty"`
	DialTimeout    *config.Duration `json:"dialTimeout,omitempty"`
}

// ClientTLS is a TLS client configuration from Secrets: CASecret holds the
// CA (key tls.ca or ca.crt), CertSecret the client certificate (tls.crt,
// tls.key).
type ClientTLS struct {
	CASecret           string `json:"caSecret,omitempty"`
	CertSecret         string `json:"certSecret,omitempty"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
	// CAOptional is deprecated in Traefik and has no effect on a client.
	CAOptional *bool `json:"caOptional,omitempty"`
}

// AuthSecret is basicAuth or digestAuth: the users are in Secret (one
// "user:hash" per line in its single key, or for basicAuth a
// kubernetes.io/basic-auth Secret).
type AuthSecret struct {
	Secret       string `json:"secret,omitempty"`
	Realm        string `json:"realm,omitempty"`
	RemoveHeader bool   `json:"removeHeader,omitempty"`
	HeaderField  string `json:"headerField,omitempty"`
}

// ForwardAuth is the forwardAuth middleware of the dynamic configuration
// with TLS from Secrets (the TLS declared here hides the embedded one).
// AuthSigninURL and MaxResponseBodySize are Traefik fields Gantry does not
// implement (a Problem when set).
type ForwardAuth struct {
	config.ForwardAuth  `json:",inline"`
	TLS                 *ClientTLS `json:"tls,omitempty"`
	MaxResponseBodySize *int64     `json:"maxResponseBodySize,omitempty"`
	AuthSigninURL       string     `json:"authSigninURL,omitempty"`
}

// MiddlewareTCPSpec is one TCP middleware; exactly one field is set.
// Source: https://doc.traefik.io/traefik/v3.7/reference/routing-configuration/kubernetes/crd/tcp/middlewaretcp/
type MiddlewareTCPSpec struct {
	InFlightConn *config.TCPInFlightConn `json:"inFlightConn,omitempty"`
	IPWhiteList  *config.TCPIPAllowList  `json:"ipWhiteList,omitempty"`
	IPAllowList  *config.TCPIPAllowList  `json:"ipAllowList,omitempty"`
}
