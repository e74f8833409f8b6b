package config

// Configuration is one complete dynamic configuration: what a provider
// publishes in a snapshot, and (with names qualified "name@provider") what the
// aggregator merges. The zero value is an empty, valid configuration.
// TCP and UDP are nil unless the source declares them (New leaves them
// nil, so configurations without them encode and hash as before); use
// EnsureTCP and EnsureUDP to fill them.
type Configuration struct {
	HTTP *HTTPConfiguration `json:"http,omitempty" toml:"http,omitempty" yaml:"http,omitempty"`
	TCP  *TCPConfiguration  `json:"tcp,omitempty" toml:"tcp,omitempty" yaml:"tcp,omitempty"`
	UDP  *UDPConfiguration  `json:"udp,omitempty" toml:"udp,omitempty" yaml:"udp,omitempty"`
	TLS  *TLSConfiguration  `json:"tls,omitempty" toml:"tls,omitempty" yaml:"tls,omitempty"`
	// EntryPoints are the listeners providers ask for (dynamic
	// entrypoints, Gantry's extension); nil unless a source declares one.
	EntryPoints map[string]*DynamicEntryPoint `json:"entryPoints,omitempty" toml:"entryPoints,omitempty" yaml:"entryPoints,omitempty"`
}

// EnsureTCP returns c.TCP, allocating it and its maps when nil.
func (c *Configuration) EnsureTCP() *TCPConfiguration {
	if c.TCP == nil {
		c.TCP = &TCPConfiguration{}
	}
	t := c.TCP
	if t.Routers == nil {
		t.Routers = map[string]*TCPRouter{}
	}
	if t.Services == nil {
		t.Services = map[string]*TCPService{}
	}
	if t.Middlewares == nil {
		t.Middlewares = map[string]*TCPMiddleware{}
	}
	if t.ServersTransports == nil {
		t.ServersTransports = map[string]*TCPServersTransport{}
	}
	return t
}

// EnsureUDP returns c.UDP, allocating it and its maps when nil.
func (c *Configuration) EnsureUDP() *UDPConfiguration {
	if c.UDP == nil {
		c.UDP = &UDPConfiguration{}
	}
	if c.UDP.Routers == nil {
		c.UDP.Routers = map[string]*UDPRouter{}
	}
	if c.UDP.Services == nil {
		c.UDP.Services = map[string]*UDPService{}
	}
	return c.UDP
}

// Empty reports whether t declares no object (nil included).
func (t *TCPConfiguration) Empty() bool {
	return t == nil || len(t.Routers)+len(t.Services)+len(t.Middlewares)+len(t.ServersTransports) == 0
}

// Empty reports whether u declares no object (nil included).
func (u *UDPConfiguration) Empty() bool {
	return u == nil || len(u.Routers)+len(u.Services) == 0
}

// HTTPConfiguration holds the HTTP objects, each map keyed by object name.
// Names may not contain '@' in a provider's own snapshot; after merging they
// are qualified as "name@provider".
type HTTPConfiguration struct {
	Routers           map[string]*Router           `json:"routers,omitempty"`
	Services          map[string]*Service          `json:"services,omitempty"`
	Middlewares       map[string]*Middleware       `json:"middlewares,omitempty"`
	ServersTransports map[string]*ServersTransport `json:"serversTransports,omitempty"`
}

// New returns an empty Configuration with every map allocated, ready to fill.
func New() *Configuration {
	return &Configuration{
		HTTP: &HTTPConfiguration{
			Routers:           map[string]*Router{},
			Services:          map[string]*Service{},
			Middlewares:       map[string]*Middleware{},
			ServersTransports: map[string]*ServersTransport{},
		},
		TLS: &TLSConfiguration{
			Options: map[string]*TLSOptions{},
			Stores:  map[string]*TLSStore{},
		},
	}
}

// RouterCommon is what HTTP and TCP routers share: the entrypoints they
// listen on, their middlewares, service, rule and priority. Router and
// TCPRouter embed it first, so its fields encode in their place, as the
// router's own (JSON, YAML, TOML, labels, tags).
type RouterCommon struct {
	// EntryPoints lists the entrypoints the router listens on; empty means
	// every entrypoint marked asDefault (or all of them when none is),
	// never the API's "traefik" entrypoint nor a UDP one.
	EntryPoints []string `json:"entryPoints,omitempty"`
	// Middlewares are applied in order, the first outermost.
	Middlewares []string `json:"middlewares,omitempty"`
	// Service is the name of the service that handles what matches.
	Service string `json:"service,omitempty"`
	// Rule is a rule in Traefik's v3 syntax (or v2 with RuleSyntax "v2"):
	// request matchers for HTTP, HostSNI, HostSNIRegexp, ClientIP and ALPN
	// for TCP.
	Rule string `json:"rule,omitempty"`
	// RuleSyntax is "", "v3" or "v2" (deprecated in Traefik, kept for migration).
	RuleSyntax string `json:"ruleSyntax,omitempty"`
	// Priority orders routers, higher first; 0 means len(Rule), and for
	// TCP a lone HostSNI(`*`) gets -1 so that it is tried last (Traefik
	// pkg/muxer/tcp).
	Priority int `json:"priority,omitempty"`
}

// Router binds a rule on some entrypoints to a service through middlewares.
// Source: https://doc.traefik.io/traefik/routing/routers/
type Router struct {
	RouterCommon
	// TLS, when set, makes the router serve TLS entrypoints only.
	TLS *RouterTLSConfig `json:"tls,omitempty"`
	// Observability toggles access logs, metrics and tracing for the router.
	Observability *RouterObservability `json:"observability,omitempty"`
	// ParentRefs names parent routers (Traefik v3.6 multi-layer routing):
	// a router with parents is not attached to entrypoints itself; it is
	// tried, by priority, after a parent's rule and middlewares have run,
	// on requests that parent matched. A router with children (a parent)
	// has no service. Not available from labels (Traefik: label:"-").
	// Source: https://doc.traefik.io/traefik/reference/routing-configuration/http/routing/multi-layer-routing/
	ParentRefs []string `json:"parentRefs,omitempty"`
}

// RouterTLSConfig is a router's TLS block. An empty block (tls: {} or the
// label tls=true) enables TLS with the default options and certificates.
type RouterTLSConfig struct {
	Options      string   `json:"options,omitempty"`
	CertResolver string   `json:"certResolver,omitempty"`
	Domains      []Domain `json:"domains,omitempty"`
}

// Domain is a main domain and its subject alternative names.
type Domain struct {
	Main string   `json:"main,omitempty"`
	SANs []string `json:"sans,omitempty"`
}

// RouterObservability switches per-router observability; nil fields mean on.
type RouterObservability struct {
	AccessLogs     *bool  `json:"accessLogs,omitempty"`
	Metrics        *bool  `json:"metrics,omitempty"`
	Tracing        *bool  `json:"tracing,omitempty"`
	TraceVerbosity string `json:"traceVerbosity,omitempty"`
}

// Service is a tagged union: exactly one of LoadBalancer, Weighted,
// Mirroring and Failover is set (Validate checks). Middlewares (Traefik
// v3.7 "services middlewares") run inside the service, after the router's
// middlewares, for every router that uses the service, and also when the
// service is reached as the child of another service.
// Source: https://doc.traefik.io/traefik/routing/services/
type Service struct {
	Middlewares         []string             `json:"middlewares,omitempty"`
	LoadBalancer        *ServersLoadBalancer `json:"loadBalancer,omitempty"`
	HighestRandomWeight *HighestRandomWeight `json:"highestRandomWeight,omitempty"`
	Weighted            *WeightedRoundRobin  `json:"weighted,omitempty"`
	Mirroring           *Mirroring           `json:"mirroring,omitempty"`
	Failover            *Failover            `json:"failover,omitempty"`
}

// HighestRandomWeight sends each client (by peer IP) to one child service
// chosen by rendezvous hashing, weighted; a child without an available
// server is skipped and only its clients move.
// Source: https://doc.traefik.io/traefik/reference/routing-configuration/http/load-balancing/service/#highest-random-weight
type HighestRandomWeight struct {
	Services    []HRWService `json:"services,omitempty"`
	HealthCheck *struct{}    `json:"healthCheck,omitempty"`
}

// HRWService is one child of a highestRandomWeight service; Weight
// defaults to 1, 0 removes the child.
type HRWService struct {
	Name   string `json:"name,omitempty"`
	Weight *int   `json:"weight,omitempty"`
}

// EffectiveWeight returns the weight, 1 when unset.
func (s HRWService) EffectiveWeight() int { return weightOr1(s.Weight) }

// ServersLoadBalancer balances requests over a list of servers.
type ServersLoadBalancer struct {
	Sticky  *Sticky  `json:"sticky,omitempty"`
	Servers []Server `json:"servers,omitempty"`
	// Strategy is "wrr" (default, smooth weighted round robin), "p2c"
	// (power of two choices on in-flight requests), "hrw" or "leasttime".
	Strategy           string                    `json:"strategy,omitempty"`
	HealthCheck        *ServerHealthCheck        `json:"healthCheck,omitempty"`
	PassiveHealthCheck *PassiveServerHealthCheck `json:"passiveHealthCheck,omitempty"`
	// PassHostHeader forwards the client's Host header; nil means true.
	PassHostHeader     *bool               `json:"passHostHeader,omitempty"`
	ResponseForwarding *ResponseForwarding `json:"responseForwarding,omitempty"`
	ServersTransport   string              `json:"serversTransport,omitempty"`
}

// PassHost reports the effective passHostHeader (default true).
func (lb *ServersLoadBalancer) PassHost() bool {
	return lb.PassHostHeader == nil || *lb.PassHostHeader
}

// Server is one upstream. URL is "scheme://host:port[/path]"; the path is
// ignored unless PreservePath is set (case 034). Weight defaults to 1; 0
// removes the server from rotation.
//
// Scheme and Port exist for labels and tags only (loadbalancer.server.port,
// loadbalancer.server.scheme): providers resolve them into URL and clear them.
type Server struct {
	URL          string `json:"url,omitempty"`
	Weight       *int   `json:"weight,omitempty"`
	PreservePath bool   `json:"preservePath,omitempty"`
	Scheme       string `json:"scheme,omitempty"`
	Port         string `json:"port,omitempty"`
	// Fenced marks a server that gets no new sessions but keeps the
	// clients its sticky cookie pins to it: the Kubernetes providers set
	// it for a terminating endpoint that still serves (EndpointSlice
	// conditions serving=true, terminating=true), as Traefik v3's
	// dynamic.Server.Fenced.
	Fenced bool `json:"fenced,omitempty"`
}

// weightOr1 is *w, or 1 when w is nil (a server's or service's default
// weight).
func weightOr1(w *int) int {
	if w == nil {
		return 1
	}
	return *w
}

// EffectiveWeight returns the weight, 1 when unset.
func (s Server) EffectiveWeight() int { return weightOr1(s.Weight) }

// ServerHealthCheck is the active health check of a load balancer.
// A server answering 2xx or 3xx (or Status, when set) is healthy.
// Source: https://doc.traefik.io/traefik/routing/services/#health-check
type ServerHealthCheck struct {
	Scheme            string            `json:"scheme,omitempty"`
	Mode              string            `json:"mode,omitempty"` // "http" (default) or "grpc"
	Path              string            `json:"path,omitempty"`
	Method            string            `json:"method,omitempty"`
	Status            int               `json:"status,omitempty"`
	Port              int               `json:"port,omitempty"`
	Interval          Duration          `json:"interval,omitempty"`          // default 30s
	UnhealthyInterval *Duration         `json:"unhealthyInterval,omitempty"` // default Interval
	Timeout           Duration          `json:"timeout,omitempty"`           // default 5s
	Hostname          string            `json:"hostname,omitempty"`
	FollowRedirects   *bool             `json:"followRedirects,omitempty"` // default true
	Headers           map[string]string `json:"headers,omitempty"`
}

// PassiveServerHealthCheck marks a server down after MaxFailedAttempts
// failures within FailureWindow, and back up after FailureWindow.
type PassiveServerHealthCheck struct {
	FailureWindow     Duration `json:"failureWindow,omitempty"`     // default 10s
	MaxFailedAttempts int      `json:"maxFailedAttempts,omitempty"` // default 1
}

// Sticky enables session affinity by cookie.
type Sticky struct {
	Cookie *Cookie `json:"cookie,omitempty"`
}

// Cookie configures the affinity cookie. Name defaults to a hash of the service name.
type Cookie struct {
	Name     string  `json:"name,omitempty"`
	Secure   bool    `json:"secure,omitempty"`
	HTTPOnly bool    `json:"httpOnly,omitempty"`
	SameSite string  `json:"sameSite,omitempty"`
	MaxAge   int     `json:"maxAge,omitempty"` // seconds
	Path     *string `json:"path,omitempty"`
	Domain   string  `json:"domain,omitempty"`
}

// ResponseForwarding controls flushing of streamed responses.
type ResponseForwarding struct {
	// FlushInterval is how often buffered response bytes are flushed;
	// default 100ms; negative flushes after every write. Streams of unknown
	// length and text/event-stream are always flushed at once.
	FlushInterval Duration `json:"flushInterval,omitempty"`
}

// WeightedRoundRobin splits traffic over other services by weight.
type WeightedRoundRobin struct {
	Services    []WRRService `json:"services,omitempty"`
	Sticky      *Sticky      `json:"sticky,omitempty"`
	HealthCheck *struct{}    `json:"healthCheck,omitempty"`
}

// WRRService is one weighted child service; Weight defaults to 1.
// Status, instead of Name, makes the child answer that HTTP status itself
// (an empty body): the share of requests the Gateway API sends to an
// invalid backendRef gets 500 (Traefik's internal WRRService.Status).
// HTTP weighted services only.
type WRRService struct {
	Name   string `json:"name,omitempty"`
	Weight *int   `json:"weight,omitempty"`
	Status *int   `json:"status,omitempty"`
}

// EffectiveWeight returns the weight, 1 when unset.
func (s WRRService) EffectiveWeight() int { return weightOr1(s.Weight) }

// Mirroring sends every request to Service and a percentage to each mirror,
// discarding the mirrors' responses.
type Mirroring struct {
	Service     string          `json:"service,omitempty"`
	MirrorBody  *bool           `json:"mirrorBody,omitempty"`
	MaxBodySize *int64          `json:"maxBodySize,omitempty"` // bytes; -1 unlimited
	Mirrors     []MirrorService `json:"mirrors,omitempty"`
	HealthCheck *struct{}       `json:"healthCheck,omitempty"`
}

// MirrorService is one mirror and the percentage (0–100) of requests it gets.
type MirrorService struct {
	Name    string `json:"name,omitempty"`
	Percent int    `json:"percent,omitempty"`
}

// Failover sends requests to Service while it has an available server, else
// to Fallback; with Errors, also a request whose answer from Service has a
// status in Errors.Status (Traefik v3.7).
// Source: https://doc.traefik.io/traefik/reference/routing-configuration/http/load-balancing/service/#failover
type Failover struct {
	Service     string          `json:"service,omitempty"`
	Fallback    string          `json:"fallback,omitempty"`
	HealthCheck *struct{}       `json:"healthCheck,omitempty"`
	Errors      *FailoverErrors `json:"errors,omitempty"`
}

// FailoverErrors is failover.errors: Status lists codes and ranges ("503",
// "500-504", "502,504") whose answer from the main service is replaced by
// the fallback's; MaxRequestBodyBytes bounds the request body kept to
// replay to the fallback (nil or negative: unlimited, Traefik's default -1).
type FailoverErrors struct {
	Status              []string `json:"status,omitempty"`
	MaxRequestBodyBytes *int64   `json:"maxRequestBodyBytes,omitempty"`
}

// ServersTransport configures connections from Gantry to servers.
// Source: https://doc.traefik.io/traefik/routing/services/#serverstransport_1
type ServersTransport struct {
	TLSClientCommon
	MaxIdleConnsPerHost int                 `json:"maxIdleConnsPerHost,omitempty"` // default 200; -1 disables keep-alive
	ForwardingTimeouts  *ForwardingTimeouts `json:"forwardingTimeouts,omitempty"`
	DisableHTTP2        bool                `json:"disableHTTP2,omitempty"`
	PeerCertURI         string              `json:"peerCertURI,omitempty"`
}

// TLSClientCommon is how Gantry verifies and authenticates to TLS servers,
// what an HTTP serversTransport and a TCP serversTransport's tls block
// share: the name verified (and sent as SNI), whether verification is
// skipped, the CAs trusted (file paths or PEM; none: the system's) and the
// client certificates presented. ServersTransport and TLSClientConfig embed
// it first, so its fields encode in their place.
type TLSClientCommon struct {
	ServerName         string        `json:"serverName,omitempty"`
	InsecureSkipVerify bool          `json:"insecureSkipVerify,omitempty"`
	RootCAs            []string      `json:"rootCAs,omitempty"`
	Certificates       []Certificate `json:"certificates,omitempty"`
}

// ForwardingTimeouts bound each phase of an upstream request, with the
// meaning of Traefik's serversTransports.<name>.forwardingTimeouts: a field
// left out (nil) takes its default, a field set to 0 means no limit.
// Source: https://doc.traefik.io/traefik/routing/services/#forwardingtimeouts
// and Traefik v3.7 pkg/config/dynamic/http_config.go (SetDefaults).
type ForwardingTimeouts struct {
	// DialTimeout bounds opening a connection (TCP, and TLS for https
	// servers). Default 30s.
	DialTimeout *Duration `json:"dialTimeout,omitempty"`
	// ResponseHeaderTimeout bounds the wait for the response head after
	// the whole request (body included) was written; on expiry 504.
	// Default 60s (Gantry; Traefik has none).
	ResponseHeaderTimeout *Duration `json:"responseHeaderTimeout,omitempty"`
	// IdleConnTimeout closes a keep-alive connection idle that long.
	// Default 90s.
	IdleConnTimeout *Duration `json:"idleConnTimeout,omitempty"`
	// ReadIdleTimeout: HTTP/2 servers are sent a PING after that long
	// without a frame. Default 0 (no PING).
	ReadIdleTimeout *Duration `json:"readIdleTimeout,omitempty"`
	// PingTimeout closes an HTTP/2 connection whose PING is not answered
	// in that time. Default 15s.
	PingTimeout *Duration `json:"pingTimeout,omitempty"`
	// ReadTimeout (Gantry) bounds the wait for the next bytes of a
	// response body from an HTTP/1.1 server, once its head was relayed:
	// re-armed by every read that returns bytes, so a stream that keeps
	// sending is never cut; on expiry the client's response is aborted
	// (no last chunk, the connection closed). Default 5m; nginx's
	// proxy_read_timeout is 60s.
	ReadTimeout *Duration `json:"readTimeout,omitempty"`
}
