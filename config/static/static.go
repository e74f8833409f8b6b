// Package static is Gantry's static configuration: entrypoints, providers,
// API, logs, metrics and the store, in Traefik v3's static layout
// (https://doc.traefik.io/traefik/reference/static-configuration/file/), so a
// traefik.yml or traefik.toml loads unchanged. It is plain data; loading
// from files, flags and GANTRY_* environment variables lives in cmd/gantry.
package static

import "github.com/gantry-proxy/gantry/config"

// Configuration is the whole static configuration.
type Configuration struct {
	Global           *Global                `json:"global,omitempty"`
	EntryPoints      map[string]*EntryPoint `json:"entryPoints,omitempty"`
	Providers        *Providers             `json:"providers,omitempty"`
	ServersTransport *ServersTransport      `json:"serversTransport,omitempty"`
	API              *API                   `json:"api,omitempty"`
	Ping             *Ping                  `json:"ping,omitempty"`
	Log              *Log                   `json:"log,omitempty"`
	AccessLog        *AccessLog             `json:"accessLog,omitempty"`
	Metrics          *Metrics               `json:"metrics,omitempty"`
	Tracing          *Tracing               `json:"tracing,omitempty"`
	Experimental     *Experimental          `json:"experimental,omitempty"`
	Core             *Core                  `json:"core,omitempty"`
	// CertificatesResolvers holds the ACME resolvers routers name in
	// tls.certResolver.
	CertificatesResolvers map[string]*CertificateResolver `json:"certificatesResolvers,omitempty"`
	// Store is Gantry's own section: where the last good configuration and
	// its history are kept.
	Store *Store `json:"store,omitempty"`
	// Cluster registers this instance in Consul (Gantry).
	Cluster *Cluster `json:"cluster,omitempty"`
	// DynamicEntryPoints lets providers open listeners inside an
	// allow-list (Gantry; dynamic.go).
	DynamicEntryPoints *DynamicEntryPoints `json:"dynamicEntryPoints,omitempty"`
}

// Global holds Traefik's global switches (accepted, no effect in Gantry).
type Global struct {
	CheckNewVersion    bool `json:"checkNewVersion,omitempty"`
	SendAnonymousUsage bool `json:"sendAnonymousUsage,omitempty"`
}

// Core holds core.defaultRuleSyntax ("v3" default, or "v2").
type Core struct {
	DefaultRuleSyntax string `json:"defaultRuleSyntax,omitempty"`
}

// EntryPoint is one listening address and its options.
type EntryPoint struct {
	// Address is "[host]:port", optionally suffixed "/tcp".
	Address   string `json:"address,omitempty"`
	AsDefault bool   `json:"asDefault,omitempty"`
	// AllowACMEByPass (Traefik 3.x) lets routers of this entrypoint
	// receive ACME challenges Gantry does not answer itself: HTTP-01
	// requests with a token it does not know go to routing (the
	// redirection skips the challenge path), and TLS-ALPN-01 hellos are
	// always routed like any other.
	AllowACMEByPass  bool              `json:"allowACMEByPass,omitempty"`
	Transport        *EntryTransport   `json:"transport,omitempty"`
	ForwardedHeaders *ForwardedHeaders `json:"forwardedHeaders,omitempty"`
	HTTP             *EntryHTTP        `json:"http,omitempty"`
	HTTP2            *EntryHTTP2       `json:"http2,omitempty"`
	// HTTP3 serves HTTP/3 over QUIC on the entrypoint's port (UDP), with
	// the same routers, certificates and TLS options as its TLS side.
	HTTP3 *EntryHTTP3 `json:"http3,omitempty"`
	// MaxHeaderBytes bounds request headers (bytes); Gantry default 64 KiB.
	MaxHeaderBytes int `json:"maxHeaderBytes,omitempty"`
	// ProxyProtocol reads PROXY protocol v1/v2 headers from trusted peers.
	ProxyProtocol *ProxyProtocol `json:"proxyProtocol,omitempty"`
	// UDP holds options of a UDP entrypoint (address "…/udp").
	UDP *EntryUDP `json:"udp,omitempty"`
}

// ProxyProtocol is entryPoints.<ep>.proxyProtocol: a connection from a
// peer in TrustedIPs (IPs or CIDRs), or from anyone with Insecure, may start
// with a PROXY protocol header giving the client's address.
// Source: https://doc.traefik.io/traefik/routing/entrypoints/#proxyprotocol
type ProxyProtocol struct {
	Insecure   bool     `json:"insecure,omitempty"`
	TrustedIPs []string `json:"trustedIPs,omitempty"`
}

// EntryUDP is entryPoints.<ep>.udp. Timeout is a UDP session's idle
// timeout (default 3s, Traefik's).
type EntryUDP struct {
	Timeout config.Duration `json:"timeout,omitempty"`
}

// EntryTransport holds an entrypoint's timeouts and connection cap.
type EntryTransport struct {
	RespondingTimeouts *RespondingTimeouts `json:"respondingTimeouts,omitempty"`
	// MaxConnections (Gantry's own) caps the entrypoint's open client
	// connections; at the cap a new one replaces the oldest idle
	// keep-alive connection, or waits in the kernel's backlog when none is
	// idle. 0 means the default: 50 000, or the entrypoint's share of the
	// open-file limit when that is lower (dataplane connCapFor).
	MaxConnections       int             `json:"maxConnections,omitempty"`
	LifeCycle            *LifeCycle      `json:"lifeCycle,omitempty"`
	KeepAliveMaxRequests int             `json:"keepAliveMaxRequests,omitempty"`
	KeepAliveMaxTime     config.Duration `json:"keepAliveMaxTime,omitempty"`
}

// RespondingTimeouts bound client connections. Zero means Gantry's default:
// readTimeout 60s (Traefik's), writeTimeout 0 (none), idleTimeout 180s, plus
// a header-read timeout (readHeaderTimeout, Gantry's, default 10s).
type RespondingTimeouts struct {
	ReadTimeout       *config.Duration `json:"readTimeout,omitempty"`
	WriteTimeout      *config.Duration `json:"writeTimeout,omitempty"`
	IdleTimeout       *config.Duration `json:"idleTimeout,omitempty"`
	ReadHeaderTimeout *config.Duration `json:"readHeaderTimeout,omitempty"`
}

// LifeCycle controls graceful shutdown. GraceTimeOut defaults to 10s.
// UpgradedGraceTimeOut (Gantry's own, default 5m) is how long upgraded
// connections (WebSocket and other Upgrade tunnels, TCP-routed
// connections) may keep running when a successor takes the entrypoint
// over: its settings changed on a static reload, or a new binary serves
// after SIGUSR2. It never shortens GraceTimeOut; a shutdown (SIGTERM)
// closes them at GraceTimeOut as before.
type LifeCycle struct {
	RequestAcceptGraceTimeout config.Duration `json:"requestAcceptGraceTimeout,omitempty"`
	GraceTimeOut              config.Duration `json:"graceTimeOut,omitempty"`
	UpgradedGraceTimeOut      config.Duration `json:"upgradedGraceTimeOut,omitempty"`
}

// ForwardedHeaders says whose X-Forwarded-* headers are trusted.
type ForwardedHeaders struct {
	Insecure   bool     `json:"insecure,omitempty"`
	TrustedIPs []string `json:"trustedIPs,omitempty"`
}

// EntryHTTP holds entrypoint-level HTTP options.
type EntryHTTP struct {
	// FastPath is deprecated and ignored (a warning is logged): every
	// HTTP/1.1 connection is served by Gantry's HTTP/1.1 server.
	FastPath *bool `json:"fastPath,omitempty"`
	// SanitizePath (default true) removes ".", ".." and empty segments
	// from request paths before routing, as Traefik does.
	// Source: https://doc.traefik.io/traefik/security/request-path/
	SanitizePath *bool `json:"sanitizePath,omitempty"`
	// EncodedCharacters (Traefik 3.7) answers 400 to a request whose path
	// holds an encoded character it does not allow; every one is allowed
	// unless set to false.
	// Source: https://doc.traefik.io/traefik/reference/install-configuration/entrypoints/
	EncodedCharacters *EncodedCharacters      `json:"encodedCharacters,omitempty"`
	Redirections      *Redirections           `json:"redirections,omitempty"`
	Middlewares       []string                `json:"middlewares,omitempty"`
	TLS               *config.RouterTLSConfig `json:"tls,omitempty"`
	// NotFound answers requests no router matches with a page fetched from
	// a service instead of the bare "404 page not found" (Gantry; Traefik
	// issue #4218).
	NotFound *NotFoundPage `json:"notFound,omitempty"`
}

// NotFoundPage is entryPoints.<name>.http.notFound: a request that matches
// no router of the entrypoint gets the page the errors middleware would
// fetch from Service (qualified, "pages@file") with GET at Query (default
// "/"; {status} is Status, {originalStatus} 404, {url} the query-escaped
// request URL), with the page's headers and body and Status (default 404,
// 100-599). An unknown or broken Service is a problem of the generation and
// the bare 404 is served. Source: Gantry; the page request is built as in
// https://doc.traefik.io/traefik/middlewares/http/errorpages/.
type NotFoundPage struct {
	Service string `json:"service,omitempty"`
	Status  int    `json:"status,omitempty"`
	Query   string `json:"query,omitempty"`
}

// EncodedCharacters is entryPoints.<name>.http.encodedCharacters: nil (or
// unset) allows, false denies %2F/%2f, %5C/%5c, %00, %3B/%3b, %25,
// %3F/%3f and %23 respectively, as Traefik 3.7 does.
type EncodedCharacters struct {
	AllowEncodedSlash         *bool `json:"allowEncodedSlash,omitempty"`
	AllowEncodedBackSlash     *bool `json:"allowEncodedBackSlash,omitempty"`
	AllowEncodedNullCharacter *bool `json:"allowEncodedNullCharacter,omitempty"`
	AllowEncodedSemicolon     *bool `json:"allowEncodedSemicolon,omitempty"`
	AllowEncodedPercent       *bool `json:"allowEncodedPercent,omitempty"`
	AllowEncodedQuestionMark  *bool `json:"allowEncodedQuestionMark,omitempty"`
	AllowEncodedHash          *bool `json:"allowEncodedHash,omitempty"`
}

// Denied returns the escapes (upper-case hex, "2F") e denies; nil when
// every one is allowed.
func (e *EncodedCharacters) Denied() []string {
	if e == nil {
		return nil
	}
	var out []string
	for _, c := range []struct {
		allow *bool
		code  string
	}{
		{e.AllowEncodedSlash, "2F"}, {e.AllowEncodedBackSlash, "5C"}, {e.AllowEncodedNullCharacter, "00"},
		{e.AllowEncodedSemicolon, "3B"}, {e.AllowEncodedPercent, "25"}, {e.AllowEncodedQuestionMark, "3F"},
		{e.AllowEncodedHash, "23"},
	} {
		if c.allow != nil && !*c.allow {
			out = append(out, c.code)
		}
	}
	return out
}

// Redirections holds the entrypoint redirection.
type Redirections struct {
	EntryPoint *RedirectEntryPoint `json:"entryPoint,omitempty"`
}

// RedirectEntryPoint redirects every request to another entrypoint.
// Scheme defaults to https, Permanent to true, Priority (of the generated
// router "<ep>-to-<to>@internal", rule HostRegexp(`^.+$`)) to
// math.MaxInt-1, above every user router; a lower one lets user routers
// with a higher priority answer first.
type RedirectEntryPoint struct {
	To        string `json:"to,omitempty"`
	Scheme    string `json:"scheme,omitempty"`
	Permanent *bool  `json:"permanent,omitempty"`
	Priority  int    `json:"priority,omitempty"`
}

// EntryHTTP3 is entryPoints.<ep>.http3: AdvertisedPort (default the
// entrypoint's port) is the UDP port announced in Alt-Svc, for a port
// translated by a firewall or load balancer in front.
// Source: https://doc.traefik.io/traefik/reference/install-configuration/entrypoints/#http3
type EntryHTTP3 struct {
	AdvertisedPort int `json:"advertisedPort,omitempty"`
}

// EntryHTTP2 holds HTTP/2 limits. MaxConcurrentStreams defaults to 100.
type EntryHTTP2 struct {
	MaxConcurrentStreams int `json:"maxConcurrentStreams,omitempty"`
}

// ServersTransport is the default transport to servers.
type ServersTransport struct {
	InsecureSkipVerify  bool                       `json:"insecureSkipVerify,omitempty"`
	RootCAs             []string                   `json:"rootCAs,omitempty"`
	MaxIdleConnsPerHost int                        `json:"maxIdleConnsPerHost,omitempty"`
	ForwardingTimeouts  *config.ForwardingTimeouts `json:"forwardingTimeouts,omitempty"`
}

// API configures the API and dashboard.
type API struct {
	Insecure  bool  `json:"insecure,omitempty"`
	Dashboard *bool `json:"dashboard,omitempty"` // default true
	Debug     bool  `json:"debug,omitempty"`
	// BasePath prefixes API and dashboard paths (default "/").
	BasePath string `json:"basePath,omitempty"`
	// Gantry's own: users ("user:hash", htpasswd) for basic auth on the API,
	// the host names the API answers to (besides loopback), and an API
	// entrypoint address used when insecure is off (default 127.0.0.1:8080).
	Users        []string `json:"users,omitempty"`
	UsersFile    string   `json:"usersFile,omitempty"`
	AllowedHosts []string `json:"allowedHosts,omitempty"`
}

// Ping enables /ping on an entrypoint (default "traefik").
type Ping struct {
	EntryPoint string `json:"entryPoint,omitempty"`
}

// Log configures application logs. Level is TRACE, DEBUG, INFO (default),
// WARN, ERROR, FATAL or PANIC; Format "common" (text, default) or "json".
type Log struct {
	Level    string `json:"level,omitempty"`
	Format   string `json:"format,omitempty"`
	FilePath string `json:"filePath,omitempty"`
	NoColor  bool   `json:"noColor,omitempty"`
	// OTLP sends the application logs as OTLP log records instead of
	// writing them (Traefik 3.3's log.otlp).
	OTLP *OTelLog `json:"otlp,omitempty"`
}

// OTelLog is Traefik 3.3's log.otlp / accessLog.otlp: OTLP over HTTP
// (default, https://localhost:4318/v1/logs) or gRPC (localhost:4317);
// ServiceName defaults to "gantry".
type OTelLog struct {
	ServiceName        string            `json:"serviceName,omitempty"`
	ResourceAttributes map[string]string `json:"resourceAttributes,omitempty"`
	HTTP               *OTLPHTTP         `json:"http,omitempty"`
	GRPC               *OTLPGRPC         `json:"grpc,omitempty"`
}

// Experimental holds Traefik's experimental switches. OTLPLogs is accepted
// (Traefik requires it for log.otlp and accessLog.otlp; Gantry does not).
type Experimental struct {
	OTLPLogs bool `json:"otlpLogs,omitempty"`
}

// AccessLog configures the access log (stdout when FilePath is empty).
// Format is "common" (default) or "json".
type AccessLog struct {
	FilePath string `json:"filePath,omitempty"`
	// AddInternals logs requests to Gantry's own services (api@internal,
	// prometheus@internal…); Traefik's default is false.
	AddInternals  bool              `json:"addInternals,omitempty"`
	Format        string            `json:"format,omitempty"`
	BufferingSize int64             `json:"bufferingSize,omitempty"`
	Filters       *AccessLogFilters `json:"filters,omitempty"`
	Fields        *AccessLogFields  `json:"fields,omitempty"`
	// OTLP sends each entry as an OTLP log record with the JSON format's
	// fields as attributes; the file/stdout output then stops unless
	// DualOutput (Traefik 3.3's accessLog.otlp and accessLog.dualOutput).
	OTLP       *OTelLog `json:"otlp,omitempty"`
	DualOutput bool     `json:"dualOutput,omitempty"`
}

// AccessLogFilters keep only matching entries.
type AccessLogFilters struct {
	StatusCodes   []string        `json:"statusCodes,omitempty"`
	RetryAttempts bool            `json:"retryAttempts,omitempty"`
	MinDuration   config.Duration `json:"minDuration,omitempty"`
}

// AccessLogFields chooses kept, dropped and redacted fields and headers.
// Modes are "keep", "drop" and "redact".
type AccessLogFields struct {
	DefaultMode string            `json:"defaultMode,omitempty"`
	Names       map[string]string `json:"names,omitempty"`
	Headers     *FieldHeaders     `json:"headers,omitempty"`
}

// FieldHeaders is the header part of AccessLogFields.
type FieldHeaders struct {
	DefaultMode string            `json:"defaultMode,omitempty"`
	Names       map[string]string `json:"names,omitempty"`
}

// Tracing is Traefik's tracing section: OpenTelemetry spans exported over
// OTLP (https://doc.traefik.io/traefik/observability/tracing/overview/).
// ServiceName defaults to "gantry" (Traefik's is "traefik"); SampleRate
// to 1.0; OTLP to HTTP on https://localhost:4318/v1/traces.
type Tracing struct {
	ServiceName             string            `json:"serviceName,omitempty"`
	SampleRate              *float64          `json:"sampleRate,omitempty"`
	ResourceAttributes      map[string]string `json:"resourceAttributes,omitempty"`
	GlobalAttributes        map[string]string `json:"globalAttributes,omitempty"` // deprecated in Traefik: span attributes
	CapturedRequestHeaders  []string          `json:"capturedRequestHeaders,omitempty"`
	CapturedResponseHeaders []string          `json:"capturedResponseHeaders,omitempty"`
	SafeQueryParams         []string          `json:"safeQueryParams,omitempty"`
	AddInternals            bool              `json:"addInternals,omitempty"`
	OTLP                    *TracingOTLP      `json:"otlp,omitempty"`
}

// TracingOTLP selects the OTLP transport: HTTP (default) or gRPC.
type TracingOTLP struct {
	HTTP *OTLPHTTP `json:"http,omitempty"`
	GRPC *OTLPGRPC `json:"grpc,omitempty"`
}

// OTLPHTTP is OTLP over HTTP: Endpoint is a URL ("http://collector:4318/v1/traces").
type OTLPHTTP struct {
	Endpoint string            `json:"endpoint,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	TLS      *config.ClientTLS `json:"tls,omitempty"`
}

// OTLPGRPC is OTLP over gRPC: Endpoint is "host:port" (default localhost:4317).
type OTLPGRPC struct {
	Endpoint string            `json:"endpoint,omitempty"`
	Insecure bool              `json:"insecure,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	TLS      *config.ClientTLS `json:"tls,omitempty"`
}

// Metrics configures metrics exporters.
type Metrics struct {
	// AddInternals counts requests to Gantry's own services (Traefik's
	// metrics.addInternals, default false).
	AddInternals bool        `json:"addInternals,omitempty"`
	Prometheus   *Prometheus `json:"prometheus,omitempty"`
	// OTLP pushes the same metrics over OTLP (Traefik's metrics.otlp).
	OTLP *MetricsOTLP `json:"otlp,omitempty"`
}

// MetricsOTLP is Traefik v3's metrics.otlp
// (https://doc.traefik.io/traefik/observability/metrics/opentelemetry/):
// HTTP (default, https://localhost:4318/v1/metrics) or gRPC
// (localhost:4317); PushInterval defaults to 10s; ExplicitBoundaries
// (seconds) to Traefik's .005 … 10; entrypoint and service attributes on,
// router attributes off; ServiceName defaults to "gantry".
type MetricsOTLP struct {
	HTTP                 *OTLPHTTP         `json:"http,omitempty"`
	GRPC                 *OTLPGRPC         `json:"grpc,omitempty"`
	AddEntryPointsLabels *bool             `json:"addEntryPointsLabels,omitempty"`
	AddRoutersLabels     bool              `json:"addRoutersLabels,omitempty"`
	AddServicesLabels    *bool             `json:"addServicesLabels,omitempty"`
	ExplicitBoundaries   []float64         `json:"explicitBoundaries,omitempty"`
	PushInterval         config.Duration   `json:"pushInterval,omitempty"`
	ServiceName          string            `json:"serviceName,omitempty"`
	ResourceAttributes   map[string]string `json:"resourceAttributes,omitempty"`
}

// Prometheus configures the Prometheus exporter. Buckets are seconds.
type Prometheus struct {
	Buckets              []float64 `json:"buckets,omitempty"`
	AddEntryPointsLabels *bool     `json:"addEntryPointsLabels,omitempty"`
	AddRoutersLabels     bool      `json:"addRoutersLabels,omitempty"`
	AddServicesLabels    *bool     `json:"addServicesLabels,omitempty"`
	EntryPoint           string    `json:"entryPoint,omitempty"`
	ManualRouting        bool      `json:"manualRouting,omitempty"`
	// HeaderLabels adds a label to the requests_total metrics per entry,
	// label name -> request header whose value it takes ("" when absent),
	// as Traefik's metrics.prometheus.headerLabels.
	HeaderLabels map[string]string `json:"headerLabels,omitempty"`
}

// Store is where bbolt keeps the last good configuration. Path defaults to
// "gantry.db" in the working directory; History (revisions kept) to 100.
type Store struct {
	Path    string `json:"path,omitempty"`
	History int    `json:"history,omitempty"`
}

// Cluster is Gantry's cluster section: with Consul set, the instance
// registers itself in the Consul agent as service ServiceName (default
// "gantry"), ID InstanceID (default "<hostname>-<first entrypoint port>"),
// at Address:Port (defaults: the agent's idea of the node address, the
// first TCP entrypoint's port), with a TTL check Gantry passes every TTL/3
// (TTL default 10s): a killed or hung instance turns critical within TTL,
// and is deregistered DeregisterCriticalServiceAfter (default 1m) later.
// The service's meta "configVersion" is the version of the configuration
// the instance serves. At shutdown the instance deregisters.
type Cluster struct {
	Consul                         *ConsulEndpoint `json:"consul,omitempty"`
	ServiceName                    string          `json:"serviceName,omitempty"`
	InstanceID                     string          `json:"instanceID,omitempty"`
	Address                        string          `json:"address,omitempty"`
	Port                           int             `json:"port,omitempty"`
	TTL                            config.Duration `json:"ttl,omitempty"`
	DeregisterCriticalServiceAfter config.Duration `json:"deregisterCriticalServiceAfter,omitempty"`
}
