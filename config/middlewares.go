package config

// Middleware is a tagged union: exactly one field is set (Validate checks).
// Building one is a switch on the set field; there is no registry.
// Field and option names are Traefik v3's:
// https://doc.traefik.io/traefik/middlewares/http/overview/
type Middleware struct {
	AddPrefix         *AddPrefix         `json:"addPrefix,omitempty"`
	StripPrefix       *StripPrefix       `json:"stripPrefix,omitempty"`
	StripPrefixRegex  *StripPrefixRegex  `json:"stripPrefixRegex,omitempty"`
	ReplacePath       *ReplacePath       `json:"replacePath,omitempty"`
	ReplacePathRegex  *ReplacePathRegex  `json:"replacePathRegex,omitempty"`
	Chain             *Chain             `json:"chain,omitempty"`
	IPAllowList       *IPAllowList       `json:"ipAllowList,omitempty"`
	IPWhiteList       *IPAllowList       `json:"ipWhiteList,omitempty"` // deprecated Traefik v2 name
	Headers           *Headers           `json:"headers,omitempty"`
	Errors            *ErrorPage         `json:"errors,omitempty"`
	RateLimit         *RateLimit         `json:"rateLimit,omitempty"`
	RedirectRegex     *RedirectRegex     `json:"redirectRegex,omitempty"`
	RedirectScheme    *RedirectScheme    `json:"redirectScheme,omitempty"`
	BasicAuth         *BasicAuth         `json:"basicAuth,omitempty"`
	DigestAuth        *DigestAuth        `json:"digestAuth,omitempty"`
	ForwardAuth       *ForwardAuth       `json:"forwardAuth,omitempty"`
	InFlightReq       *InFlightReq       `json:"inFlightReq,omitempty"`
	Buffering         *Buffering         `json:"buffering,omitempty"`
	CircuitBreaker    *CircuitBreaker    `json:"circuitBreaker,omitempty"`
	Compress          *Compress          `json:"compress,omitempty"`
	PassTLSClientCert *PassTLSClientCert `json:"passTLSClientCert,omitempty"`
	Retry             *Retry             `json:"retry,omitempty"`
	ContentType       *ContentType       `json:"contentType,omitempty"`
	GrpcWeb           *GrpcWeb           `json:"grpcWeb,omitempty"`
	EncodedCharacters *EncodedCharacters `json:"encodedCharacters,omitempty"`
	Plugin            map[string]any     `json:"plugin,omitempty"`
}

// AddPrefix prepends Prefix to the request path.
type AddPrefix struct {
	Prefix string `json:"prefix,omitempty"`
}

// StripPrefix removes the first matching prefix and sets X-Forwarded-Prefix.
type StripPrefix struct {
	Prefixes   []string `json:"prefixes,omitempty"`
	ForceSlash *bool    `json:"forceSlash,omitempty"` // deprecated in Traefik v3
}

// StripPrefixRegex removes the first prefix matching one of Regex.
type StripPrefixRegex struct {
	Regex []string `json:"regex,omitempty"`
}

// ReplacePath replaces the path and sets X-Replaced-Path.
type ReplacePath struct {
	Path string `json:"path,omitempty"`
}

// ReplacePathRegex rewrites the path with a regexp and replacement ($1 …).
type ReplacePathRegex struct {
	Regex       string `json:"regex,omitempty"`
	Replacement string `json:"replacement,omitempty"`
}

// Chain applies other middlewares in order.
type Chain struct {
	Middlewares []string `json:"middlewares,omitempty"`
}

// IPStrategy chooses the client IP: Depth counts from the right of
// X-Forwarded-For, ExcludedIPs are skipped from the right, IPv6Subnet groups
// IPv6 addresses by prefix length. All zero: the peer address.
type IPStrategy struct {
	Depth       int      `json:"depth,omitempty"`
	ExcludedIPs []string `json:"excludedIPs,omitempty"`
	IPv6Subnet  *int     `json:"ipv6Subnet,omitempty"`
}

// IPAllowList admits only clients in SourceRange (IPs or CIDRs).
type IPAllowList struct {
	SourceRange      []string    `json:"sourceRange,omitempty"`
	IPStrategy       *IPStrategy `json:"ipStrategy,omitempty"`
	RejectStatusCode int         `json:"rejectStatusCode,omitempty"` // default 403
}

// Headers sets request/response headers, CORS and security headers.
// An empty value in a custom header map removes that header.
type Headers struct {
	CustomRequestHeaders              map[string]string `json:"customRequestHeaders,omitempty"`
	CustomResponseHeaders             map[string]string `json:"customResponseHeaders,omitempty"`
	AccessControlAllowCredentials     bool              `json:"accessControlAllowCredentials,omitempty"`
	AccessControlAllowHeaders         []string          `json:"accessControlAllowHeaders,omitempty"`
	AccessControlAllowMethods         []string          `json:"accessControlAllowMethods,omitempty"`
	AccessControlAllowOriginList      []string          `json:"accessControlAllowOriginList,omitempty"`
	AccessControlAllowOriginListRegex []string          `json:"accessControlAllowOriginListRegex,omitempty"`
	AccessControlExposeHeaders        []string          `json:"accessControlExposeHeaders,omitempty"`
	AccessControlMaxAge               int64             `json:"accessControlMaxAge,omitempty"` // seconds
	AddVaryHeader                     bool              `json:"addVaryHeader,omitempty"`
	AllowedHosts                      []string          `json:"allowedHosts,omitempty"`
	HostsProxyHeaders                 []string          `json:"hostsProxyHeaders,omitempty"`
	SSLProxyHeaders                   map[string]string `json:"sslProxyHeaders,omitempty"`
	STSSeconds                        int64             `json:"stsSeconds,omitempty"`
	STSIncludeSubdomains              bool              `json:"stsIncludeSubdomains,omitempty"`
	STSPreload                        bool              `json:"stsPreload,omitempty"`
	ForceSTSHeader                    bool              `json:"forceSTSHeader,omitempty"`
	FrameDeny                         bool              `json:"frameDeny,omitempty"`
	CustomFrameOptionsValue           string            `json:"customFrameOptionsValue,omitempty"`
	ContentTypeNosniff                bool              `json:"contentTypeNosniff,omitempty"`
	BrowserXSSFilter                  bool              `json:"browserXssFilter,omitempty"`
	CustomBrowserXSSValue             string            `json:"customBrowserXSSValue,omitempty"`
	ContentSecurityPolicy             string            `json:"contentSecurityPolicy,omitempty"`
	ContentSecurityPolicyReportOnly   string            `json:"contentSecurityPolicyReportOnly,omitempty"`
	PublicKey                         string            `json:"publicKey,omitempty"`
	ReferrerPolicy                    string            `json:"referrerPolicy,omitempty"`
	PermissionsPolicy                 string            `json:"permissionsPolicy,omitempty"`
	IsDevelopment                     bool              `json:"isDevelopment,omitempty"`
}

// ErrorPage serves the response of Service (with Query, where {status} and
// {url} are replaced) when the upstream status is in one of the Status
// ranges ("500-599", "404").
//
// ErrorRequestHeaders lists the request headers sent to the error page
// service: nil (unset) sends all of the client's headers, an empty list
// none (Traefik v3.7). An empty label value is unset (all headers): use a
// file, KV or a header name that is never sent to forward none.
type ErrorPage struct {
	Status              []string       `json:"status,omitempty"`
	StatusRewrites      map[string]int `json:"statusRewrites,omitempty"`
	Service             string         `json:"service,omitempty"`
	Query               string         `json:"query,omitempty"`
	ErrorRequestHeaders []string       `json:"errorRequestHeaders,omitzero"`
}

// SourceCriterion chooses what a rate or in-flight limit counts by:
// the client IP (default, via IPStrategy), a request header, or the host.
type SourceCriterion struct {
	IPStrategy        *IPStrategy `json:"ipStrategy,omitempty"`
	RequestHeaderName string      `json:"requestHeaderName,omitempty"`
	RequestHost       bool        `json:"requestHost,omitempty"`
}

// RateLimit is a token bucket per source: Average requests per Period
// (default 1s) with bursts of Burst (default 1).
type RateLimit struct {
	Average         int64            `json:"average,omitempty"`
	Period          Duration         `json:"period,omitempty"`
	Burst           int64            `json:"burst,omitempty"`
	SourceCriterion *SourceCriterion `json:"sourceCriterion,omitempty"`
	// Redis keeps the buckets in Redis, shared by every instance using the
	// same Redis and middleware name (Traefik v3.4).
	Redis *RateLimitRedis `json:"redis,omitempty"`
}

// RateLimitRedis is rateLimit.redis (Traefik v3.4): the Redis the buckets
// live in. Endpoints default to ["localhost:6379"]; more than one makes a
// cluster client (go-redis UniversalClient, as Traefik). Timeouts default
// to go-redis's (dial 5s, read and write 3s); PoolSize 0 is 10 per CPU.
// Source: https://doc.traefik.io/traefik/reference/routing-configuration/http/middlewares/ratelimit/
type RateLimitRedis struct {
	Endpoints      []string   `json:"endpoints,omitempty"`
	Username       string     `json:"username,omitempty"`
	Password       string     `json:"password,omitempty"`
	DB             int        `json:"db,omitempty"`
	TLS            *ClientTLS `json:"tls,omitempty"`
	PoolSize       int        `json:"poolSize,omitempty"`
	MinIdleConns   int        `json:"minIdleConns,omitempty"`
	MaxActiveConns int        `json:"maxActiveConns,omitempty"`
	ReadTimeout    Duration   `json:"readTimeout,omitempty"`
	WriteTimeout   Duration   `json:"writeTimeout,omitempty"`
	DialTimeout    Duration   `json:"dialTimeout,omitempty"`
}

// RedirectRegex redirects URLs matching Regex to Replacement.
type RedirectRegex struct {
	Regex       string `json:"regex,omitempty"`
	Replacement string `json:"replacement,omitempty"`
	Permanent   bool   `json:"permanent,omitempty"`
}

// RedirectScheme redirects to Scheme (and Port); permanent gives 301/308.
type RedirectScheme struct {
	Scheme    string `json:"scheme,omitempty"`
	Port      string `json:"port,omitempty"`
	Permanent bool   `json:"permanent,omitempty"`
}

// BasicAuth checks "user:hash" credentials (bcrypt, SHA1, APR1/MD5).
type BasicAuth struct {
	Users        []string `json:"users,omitempty"`
	UsersFile    string   `json:"usersFile,omitempty"`
	Realm        string   `json:"realm,omitempty"`
	RemoveHeader bool     `json:"removeHeader,omitempty"`
	HeaderField  string   `json:"headerField,omitempty"`
}

// DigestAuth checks "user:realm:hash" credentials (RFC 7616 MD5).
type DigestAuth struct {
	Users        []string `json:"users,omitempty"`
	UsersFile    string   `json:"usersFile,omitempty"`
	Realm        string   `json:"realm,omitempty"`
	RemoveHeader bool     `json:"removeHeader,omitempty"`
	HeaderField  string   `json:"headerField,omitempty"`
}

// ForwardAuth delegates authentication to the service at Address.
type ForwardAuth struct {
	Address                  string     `json:"address,omitempty"`
	TLS                      *ClientTLS `json:"tls,omitempty"`
	TrustForwardHeader       bool       `json:"trustForwardHeader,omitempty"`
	AuthResponseHeaders      []string   `json:"authResponseHeaders,omitempty"`
	AuthResponseHeadersRegex string     `json:"authResponseHeadersRegex,omitempty"`
	AuthRequestHeaders       []string   `json:"authRequestHeaders,omitempty"`
	AddAuthCookiesToResponse []string   `json:"addAuthCookiesToResponse,omitempty"`
	HeaderField              string     `json:"headerField,omitempty"`
	ForwardBody              bool       `json:"forwardBody,omitempty"`
	MaxBodySize              *int64     `json:"maxBodySize,omitempty"` // bytes; -1 unlimited
	PreserveLocationHeader   bool       `json:"preserveLocationHeader,omitempty"`
	PreserveRequestMethod    bool       `json:"preserveRequestMethod,omitempty"`
}

// InFlightReq caps simultaneous requests per source at Amount.
type InFlightReq struct {
	Amount          int64            `json:"amount,omitempty"`
	SourceCriterion *SourceCriterion `json:"sourceCriterion,omitempty"`
}

// Buffering reads whole requests/responses before forwarding them. Sizes in bytes; 0 = unlimited.
type Buffering struct {
	MaxRequestBodyBytes  int64  `json:"maxRequestBodyBytes,omitempty"`
	MemRequestBodyBytes  int64  `json:"memRequestBodyBytes,omitempty"`
	MaxResponseBodyBytes int64  `json:"maxResponseBodyBytes,omitempty"`
	MemResponseBodyBytes int64  `json:"memResponseBodyBytes,omitempty"`
	RetryExpression      string `json:"retryExpression,omitempty"`
}

// CircuitBreaker opens when Expression holds, answering ResponseCode (default 503).
type CircuitBreaker struct {
	Expression       string   `json:"expression,omitempty"`
	CheckPeriod      Duration `json:"checkPeriod,omitempty"`      // default 100ms
	FallbackDuration Duration `json:"fallbackDuration,omitempty"` // default 10s
	RecoveryDuration Duration `json:"recoveryDuration,omitempty"` // default 10s
	ResponseCode     int      `json:"responseCode,omitempty"`
}

// Compress compresses responses (gzip, br, zstd) above MinResponseBodyBytes (default 1024).
type Compress struct {
	ExcludedContentTypes []string `json:"excludedContentTypes,omitempty"`
	IncludedContentTypes []string `json:"includedContentTypes,omitempty"`
	MinResponseBodyBytes int      `json:"minResponseBodyBytes,omitempty"`
	Encodings            []string `json:"encodings,omitempty"`
	DefaultEncoding      string   `json:"defaultEncoding,omitempty"`
}

// PassTLSClientCert forwards the client certificate (PEM) or selected fields.
type PassTLSClientCert struct {
	PEM  bool                      `json:"pem,omitempty"`
	Info *TLSClientCertificateInfo `json:"info,omitempty"`
}

// TLSClientCertificateInfo selects certificate fields for X-Forwarded-Tls-Client-Cert-Info.
type TLSClientCertificateInfo struct {
	NotAfter     bool                           `json:"notAfter,omitempty"`
	NotBefore    bool                           `json:"notBefore,omitempty"`
	Sans         bool                           `json:"sans,omitempty"`
	SerialNumber bool                           `json:"serialNumber,omitempty"`
	Subject      *TLSClientCertificateSubjectDN `json:"subject,omitempty"`
	Issuer       *TLSClientCertificateIssuerDN  `json:"issuer,omitempty"`
}

// TLSClientCertificateSubjectDN selects subject fields.
type TLSClientCertificateSubjectDN struct {
	Country            bool `json:"country,omitempty"`
	Province           bool `json:"province,omitempty"`
	Locality           bool `json:"locality,omitempty"`
	Organization       bool `json:"organization,omitempty"`
	OrganizationalUnit bool `json:"organizationalUnit,omitempty"`
	CommonName         bool `json:"commonName,omitempty"`
	SerialNumber       bool `json:"serialNumber,omitempty"`
	DomainComponent    bool `json:"domainComponent,omitempty"`
}

// TLSClientCertificateIssuerDN selects issuer fields.
type TLSClientCertificateIssuerDN struct {
	Country         bool `json:"country,omitempty"`
	Province        bool `json:"province,omitempty"`
	Locality        bool `json:"locality,omitempty"`
	Organization    bool `json:"organization,omitempty"`
	CommonName      bool `json:"commonName,omitempty"`
	SerialNumber    bool `json:"serialNumber,omitempty"`
	DomainComponent bool `json:"domainComponent,omitempty"`
}

// Retry re-sends a request, Attempts tries in all: after a network error
// that left nothing at the backend (unless DisableRetryOnNetworkError), and
// after an answer whose status is in Status ("503", "500-504") for
// idempotent methods (POST, PATCH and LOCK too with
// RetryNonIdempotentMethod). InitialInterval starts an exponential backoff
// (0: retry at once); Timeout (0: none) ends retrying once elapsed since the
// first try. MaxRequestBodyBytes (nil: 2 MiB) bounds the body kept for
// status retries; a larger body disables them for that request.
// Source: https://doc.traefik.io/traefik/middlewares/http/retry/ (v3.7)
type Retry struct {
	Attempts                   int      `json:"attempts,omitempty"`
	InitialInterval            Duration `json:"initialInterval,omitempty"`
	Timeout                    Duration `json:"timeout,omitempty"`
	Status                     []string `json:"status,omitempty"`
	DisableRetryOnNetworkError bool     `json:"disableRetryOnNetworkError,omitempty"`
	RetryNonIdempotentMethod   bool     `json:"retryNonIdempotentMethod,omitempty"`
	MaxRequestBodyBytes        *int64   `json:"maxRequestBodyBytes,omitempty"`
}

// RetryDefaultMaxRequestBodyBytes is Traefik's retry.maxRequestBodyBytes
// default (2 MiB, PR 12827).
const RetryDefaultMaxRequestBodyBytes int64 = 2 << 20

// ContentType controls Content-Type auto-detection (off by default in v3).
type ContentType struct {
	AutoDetect bool `json:"autoDetect,omitempty"`
}

// GrpcWeb converts gRPC-Web requests to gRPC for origins in AllowOrigins.
type GrpcWeb struct {
	AllowOrigins []string `json:"allowOrigins,omitempty"`
}

// EncodedCharacters allows encoded characters in the request path that are
// rejected (400) by default.
type EncodedCharacters struct {
	AllowEncodedSlash         bool `json:"allowEncodedSlash,omitempty"`
	AllowEncodedBackSlash     bool `json:"allowEncodedBackSlash,omitempty"`
	AllowEncodedNullCharacter bool `json:"allowEncodedNullCharacter,omitempty"`
	AllowEncodedSemicolon     bool `json:"allowEncodedSemicolon,omitempty"`
	AllowEncodedPercent       bool `json:"allowEncodedPercent,omitempty"`
	AllowEncodedQuestionMark  bool `json:"allowEncodedQuestionMark,omitempty"`
	AllowEncodedHash          bool `json:"allowEncodedHash,omitempty"`
}
