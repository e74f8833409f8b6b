package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateReportsEveryProblem checks that Validate returns all
// problems, not the first, in order (kind, then name), each naming the
// object, the field and what is wrong.
func TestValidateReportsEveryProblem(t *testing.T) {
	c := New()
	c.HTTP.Routers["b"] = &Router{RouterCommon: RouterCommon{Rule: " ", Priority: MaxPriority + 1, RuleSyntax: "v4", Middlewares: []string{"ok", ""}}}
	c.HTTP.Routers["a"] = nil
	c.HTTP.Routers["good"] = &Router{RouterCommon: RouterCommon{Rule: "Host(`a`)", Service: "s"}}
	c.HTTP.Services["none"] = &Service{}
	c.HTTP.Services["nil"] = nil
	c.HTTP.Services["two"] = &Service{LoadBalancer: &ServersLoadBalancer{}, Failover: &Failover{Service: "a", Fallback: "b"}}
	c.HTTP.Services["lb"] = &Service{LoadBalancer: &ServersLoadBalancer{
		Servers: []Server{
			{URL: ""},
			{URL: "ftp://x"},
			{URL: "http://"},
			{URL: "http://ok:80", Weight: ptr(-1)},
			{URL: "http://[::1"},
		},
		Strategy:    "random",
		HealthCheck: &ServerHealthCheck{Path: "health", Interval: -1, Port: 70000},
	}}
	c.HTTP.Services["w"] = &Service{Weighted: &WeightedRoundRobin{Services: []WRRService{{Name: ""}, {Name: "x", Weight: ptr(-2)}}}}
	c.HTTP.Services["wempty"] = &Service{Weighted: &WeightedRoundRobin{}}
	c.HTTP.Services["m"] = &Service{Mirroring: &Mirroring{Mirrors: []MirrorService{{Name: "", Percent: 101}}}}
	c.HTTP.Services["f"] = &Service{Failover: &Failover{Service: "a"}}
	c.HTTP.Middlewares["empty"] = &Middleware{}
	c.HTTP.Middlewares["nil"] = nil
	c.HTTP.Middlewares["both"] = &Middleware{AddPrefix: &AddPrefix{Prefix: "/a"}, Compress: &Compress{}}
	c.HTTP.Middlewares["plug"] = &Middleware{Plugin: map[string]any{"x": nil}}
	c.HTTP.Middlewares["fine"] = &Middleware{StripPrefix: &StripPrefix{Prefixes: []string{"/a"}}}
	tc := c.EnsureTCP()
	tc.Routers["nil"] = nil
	tc.Routers["r"] = &TCPRouter{RouterCommon: RouterCommon{Priority: MaxPriority + 1}}
	tc.Services["s"] = &TCPService{LoadBalancer: &TCPServersLoadBalancer{Servers: []TCPServer{{Address: "db"}, {Address: "db:0"}, {}}}}
	tc.Services["w"] = &TCPService{Weighted: &TCPWeightedRoundRobin{}}
	tc.Services["none"] = &TCPService{}
	tc.Services["nil"] = nil
	tc.Services["both"] = &TCPService{LoadBalancer: &TCPServersLoadBalancer{}, Weighted: &TCPWeightedRoundRobin{}}
	tc.Middlewares["m"] = &TCPMiddleware{IPAllowList: &TCPIPAllowList{SourceRange: []string{"10.0.0.0/8", "nope"}}}
	tc.Middlewares["n"] = &TCPMiddleware{InFlightConn: &TCPInFlightConn{}}
	tc.Middlewares["none"] = &TCPMiddleware{}
	tc.Middlewares["nil"] = nil
	tc.Middlewares["two"] = &TCPMiddleware{InFlightConn: &TCPInFlightConn{Amount: 1}, IPAllowList: &TCPIPAllowList{SourceRange: []string{"10.0.0.0/8"}}}
	tc.ServersTransports["nil"] = nil
	tc.ServersTransports["st"] = &TCPServersTransport{ProxyProtocol: &ProxyProtocol{Version: 3}}
	u := c.EnsureUDP()
	u.Routers["ur"] = &UDPRouter{}
	u.Routers["nil"] = nil
	u.Services["us"] = &UDPService{LoadBalancer: &UDPServersLoadBalancer{Servers: []UDPServer{{Address: "[::1]:53"}, {Address: ":53"}, {Address: "127.0.0.1:53", Weight: ptr(-1)}}}}
	u.Services["un"] = &UDPService{}
	u.Services["nil"] = nil
	u.Services["ub"] = &UDPService{LoadBalancer: &UDPServersLoadBalancer{}, Weighted: &UDPWeightedRoundRobin{}}
	c.TLS.Certificates = []*CertAndStores{{Certificate: Certificate{CertFile: "/a.crt"}}, nil}

	var got []string
	for _, e := range Validate(c) {
		got = append(got, e.Error())
	}
	want := []string{
		"router a: empty definition",
		"router b: rule: empty; a router needs a rule",
		"router b: service: empty; a router needs a service",
		"router b: priority: 9223372036854774808 is above the maximum 9223372036854774807",
		`router b: ruleSyntax: "v4" is not one of v2, v3`,
		"router b: middlewares[1]: empty name",
		"service f: failover: service and fallback are both required",
		"service lb: loadBalancer.servers[0].url: empty",
		`service lb: loadBalancer.servers[1].url: "ftp://x": scheme must be http, https or h2c`,
		`service lb: loadBalancer.servers[2].url: "http://": no host`,
		"service lb: loadBalancer.servers[3].weight: -1 is negative",
		`service lb: loadBalancer.servers[4].url: "http://[::1" does not parse: parse "http://[::1": missing ']' in host`,
		`service lb: loadBalancer.strategy: "random" is not one of wrr, p2c, hrw, leasttime`,
		`service lb: loadBalancer.healthCheck.path: "health" must start with /`,
		"service lb: loadBalancer.healthCheck: interval and timeout must not be negative",
		"service lb: loadBalancer.healthCheck.port: 70000 is out of range",
		"service m: mirroring.service: empty",
		"service m: mirroring.mirrors[0].name: empty",
		"service m: mirroring.mirrors[0].percent: 101 is not within 0-100",
		"service nil: empty definition",
		"service none: no kind set; want one of loadBalancer, highestRandomWeight, weighted, mirroring, failover",
		"service two: more than one kind set (loadBalancer, failover); want exactly one",
		"service w: weighted.services[0].name: empty",
		"service w: weighted.services[1].weight: -2 is negative",
		"service wempty: weighted.services: empty",
		"middleware both: more than one kind set (addPrefix, compress); want exactly one",
		"middleware empty: no kind set; want exactly one (stripPrefix, headers, …)",
		"middleware nil: no kind set; want exactly one (stripPrefix, headers, …)",
		"middleware plug: plugin: plugins are not supported by Gantry",
		"tcpRouter nil: empty definition",
		"tcpRouter r: rule: empty; a TCP router needs a rule (HostSNI(`*`) matches every connection)",
		"tcpRouter r: service: empty; a router needs a service",
		"tcpRouter r: priority: 9223372036854774808 is above the maximum 9223372036854774807",
		"tcpService both: more than one kind set (loadBalancer, weighted); want exactly one",
		"tcpService nil: empty definition",
		"tcpService none: no kind set; want one of loadBalancer, weighted",
		`tcpService s: loadBalancer.servers[0].address: "db": want host:port: address db: missing port in address`,
		`tcpService s: loadBalancer.servers[1].address: "db:0": port must be a number within 1-65535`,
		"tcpService s: loadBalancer.servers[2].address: empty",
		"tcpService w: weighted.services: empty",
		`tcpMiddleware m: ipAllowList.sourceRange[1]: "nope" is neither an IP nor a CIDR`,
		"tcpMiddleware n: inFlightConn.amount: 0: want at least 1",
		"tcpMiddleware nil: empty definition",
		"tcpMiddleware none: no kind set; want one of inFlightConn, ipAllowList",
		"tcpMiddleware two: more than one kind set (inFlightConn, ipAllowList); want exactly one",
		"tcpServersTransport st: proxyProtocol.version: 3 is not 1 or 2",
		"udpRouter nil: empty definition",
		"udpRouter ur: service: empty; a router needs a service",
		"udpService nil: empty definition",
		"udpService ub: more than one kind set (loadBalancer, weighted); want exactly one",
		"udpService un: no kind set; want one of loadBalancer, weighted",
		`udpService us: loadBalancer.servers[1].address: ":53": no host`,
		"udpService us: loadBalancer.servers[2].weight: -1 is negative",
		"tls certificates: [0]: certFile and keyFile are both required",
		"tls certificates: [1]: certFile and keyFile are both required",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Validate (-want +got):\n%s", d)
	}
}

func TestValidateEmpty(t *testing.T) {
	for _, c := range []*Configuration{nil, {}, New()} {
		if errs := Validate(c); len(errs) != 0 {
			t.Errorf("Validate(%v) = %v, want none", c, errs)
		}
	}
}

func TestMiddlewareKinds(t *testing.T) {
	if got := MiddlewareKinds(&Middleware{Headers: &Headers{}, IPWhiteList: &IPAllowList{}}); !cmp.Equal(got, []string{"ipWhiteList", "headers"}) {
		t.Errorf("MiddlewareKinds = %v", got)
	}
	if MiddlewareKinds(nil) != nil {
		t.Errorf("MiddlewareKinds(nil) not nil")
	}
}
