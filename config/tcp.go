package config

// TCPConfiguration holds the TCP objects, each map keyed by object name, in
// Traefik v3's layout (pkg/config/dynamic/tcp_config.go;
// https://doc.traefik.io/traefik/reference/routing-configuration/tcp/).
type TCPConfiguration struct {
	Routers           map[string]*TCPRouter           `json:"routers,omitempty"`
	Services          map[string]*TCPService          `json:"services,omitempty"`
	Middlewares       map[string]*TCPMiddleware       `json:"middlewares,omitempty"`
	ServersTransports map[string]*TCPServersTransport `json:"serversTransports,omitempty"`
}

// TCPRouter routes connections whose rule matches (HostSNI, HostSNIRegexp,
// ClientIP, ALPN) to a TCP service.
type TCPRouter struct {
	RouterCommon
	// TLS, when set, makes the router match TLS connections only: with
	// Passthrough the encrypted bytes are forwarded as they are, else Gantry
	// terminates TLS with the HTTP certificate machinery.
	TLS *RouterTCPTLSConfig `json:"tls,omitempty"`
}

// RouterTCPTLSConfig is a TCP router's TLS block: Passthrough, then the
// fields of an HTTP router's.
type RouterTCPTLSConfig struct {
	Passthrough bool `json:"passthrough,omitempty"`
	RouterTLSConfig
}

// TCPService is a tagged union: exactly one field is set (Validate checks).
type TCPService struct {
	LoadBalancer *TCPServersLoadBalancer `json:"loadBalancer,omitempty"`
	Weighted     *TCPWeightedRoundRobin  `json:"weighted,omitempty"`
}

// TCPServersLoadBalancer balances connections over servers (round robin,
// weighted by Weight).
type TCPServersLoadBalancer struct {
	Servers          []TCPServer `json:"servers,omitempty"`
	ServersTransport string      `json:"serversTransport,omitempty"`
	// ProxyProtocol and TerminationDelay (milliseconds) are the deprecated
	// per-service forms of the serversTransport fields: used only when
	// ServersTransport is empty, ignored beside it, as in Traefik v3.7.
	ProxyProtocol    *ProxyProtocol        `json:"proxyProtocol,omitempty"`
	TerminationDelay *int                  `json:"terminationDelay,omitempty"`
	HealthCheck      *TCPServerHealthCheck `json:"healthCheck,omitempty"`
}

// TCPServer is one upstream "host:port". TLS dials it with TLS. Port exists
// for labels and tags only (loadbalancer.server.port): providers resolve it
// into Address and clear it. Weight (Gantry's) defaults to 1; 0 removes the
// server from rotation.
type TCPServer struct {
	Address string `json:"address,omitempty"`
	Port    string `json:"port,omitempty"`
	TLS     bool   `json:"tls,omitempty"`
	Weight  *int   `json:"weight,omitempty"`
}

// EffectiveWeight returns the weight, 1 when unset.
func (s TCPServer) EffectiveWeight() int { return weightOr1(s.Weight) }

// ProxyProtocol sends a PROXY protocol header (version 1 or 2, default 2)
// to the server before any byte of the client.
// Source: https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt
type ProxyProtocol struct {
	Version int `json:"version,omitempty"`
}

// TCPServerHealthCheck is Traefik 3.6's TCP health check: connect to the
// server (or Port), optionally write Send and expect Expect as the start of
// the reply, every Interval (default 30s; UnhealthyInterval while down),
// each attempt bounded by Timeout (default 5s).
type TCPServerHealthCheck struct {
	Port              int       `json:"port,omitempty"`
	Send              string    `json:"send,omitempty"`
	Expect            string    `json:"expect,omitempty"`
	Interval          Duration  `json:"interval,omitempty"`
	UnhealthyInterval *Duration `json:"unhealthyInterval,omitempty"`
	Timeout           Duration  `json:"timeout,omitempty"`
}

// TCPWeightedRoundRobin splits connections over other TCP services.
type TCPWeightedRoundRobin struct {
	Services    []WRRService `json:"services,omitempty"`
	HealthCheck *struct{}    `json:"healthCheck,omitempty"`
}

// TCPMiddleware is a tagged union of the TCP middlewares.
type TCPMiddleware struct {
	InFlightConn *TCPInFlightConn `json:"inFlightConn,omitempty"`
	IPWhiteList  *TCPIPAllowList  `json:"ipWhiteList,omitempty"` // deprecated name of ipAllowList
	IPAllowList  *TCPIPAllowList  `json:"ipAllowList,omitempty"`
}

// TCPInFlightConn caps simultaneous connections per client IP.
type TCPInFlightConn struct {
	Amount int64 `json:"amount,omitempty"`
}

// TCPIPAllowList accepts connections from the listed IPs or CIDRs only;
// others are closed at once.
type TCPIPAllowList struct {
	SourceRange []string `json:"sourceRange,omitempty"`
}

// TCPServersTransport configures connections to TCP servers. Zero values
// mean Traefik's defaults: dialTimeout 30s, dialKeepAlive 15s,
// terminationDelay 100ms.
type TCPServersTransport struct {
	DialKeepAlive    Duration         `json:"dialKeepAlive,omitempty"`
	DialTimeout      Duration         `json:"dialTimeout,omitempty"`
	ProxyProtocol    *ProxyProtocol   `json:"proxyProtocol,omitempty"`
	TerminationDelay Duration         `json:"terminationDelay,omitempty"`
	TLS              *TLSClientConfig `json:"tls,omitempty"`
}

// TLSClientConfig is how Gantry dials TLS servers.
type TLSClientConfig struct {
	TLSClientCommon
	PeerCertURI string `json:"peerCertURI,omitempty"`
}

// UDPConfiguration holds the UDP objects (Traefik pkg/config/dynamic/udp_config.go).
type UDPConfiguration struct {
	Routers  map[string]*UDPRouter  `json:"routers,omitempty"`
	Services map[string]*UDPService `json:"services,omitempty"`
}

// UDPRouter sends every datagram of its entrypoints to Service; UDP has no
// rules, so an entrypoint serves one router.
type UDPRouter struct {
	EntryPoints []string `json:"entryPoints,omitempty"`
	Service     string   `json:"service,omitempty"`
}

// UDPService is a tagged union: exactly one field is set.
type UDPService struct {
	LoadBalancer *UDPServersLoadBalancer `json:"loadBalancer,omitempty"`
	Weighted     *UDPWeightedRoundRobin  `json:"weighted,omitempty"`
}

// UDPServersLoadBalancer balances sessions over servers.
type UDPServersLoadBalancer struct {
	Servers []UDPServer `json:"servers,omitempty"`
}

// UDPServer is one upstream "host:port"; Port as in TCPServer.
type UDPServer struct {
	Address string `json:"address,omitempty"`
	Port    string `json:"port,omitempty"`
	Weight  *int   `json:"weight,omitempty"`
}

// EffectiveWeight returns the weight, 1 when unset.
func (s UDPServer) EffectiveWeight() int { return weightOr1(s.Weight) }

// UDPWeightedRoundRobin splits sessions over other UDP services.
type UDPWeightedRoundRobin struct {
	Services []WRRService `json:"services,omitempty"`
}
