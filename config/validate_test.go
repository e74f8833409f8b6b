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
	c.HTTP.Routers["b"] = &Router{Rule: " ", Priority: MaxPriority + 1, RuleSyntax: "v4", Middlewares: []string{"ok", ""}}
	c.HTTP.Routers["a"] = nil
	c.HTTP.Routers["good"] = &Router{Rule: "Host(`a`)", Service: "s"}
	c.HTTP.Services["none"] = &Service{}
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
	c.HTTP.Middlewares["both"] = &Middleware{AddPrefix: &AddPrefix{Prefix: "/a"}, Compress: &Compress{}}
	c.HTTP.Middlewares["plug"] = &Middleware{Plugin: map[string]any{"x": nil}}
	c.HTTP.Middlewares["fine"] = &Middleware{StripPrefix: &StripPrefix{Prefixes: []string{"/a"}}}
	c.TCP = map[string]any{"routers": map[string]any{}}
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
		"service none: no kind set; want one of loadBalancer, weighted, mirroring, failover",
		"service two: more than one kind set (loadBalancer, failover); want exactly one",
		"service w: weighted.services[0].name: empty",
		"service w: weighted.services[1].weight: -2 is negative",
		"service wempty: weighted.services: empty",
		"middleware both: more than one kind set (addPrefix, compress); want exactly one",
		"middleware empty: no kind set; want exactly one (stripPrefix, headers, …)",
		"middleware plug: plugin: plugins are not supported by Gantry",
		"tcp *: TCP routing is not supported by Gantry; section ignored",
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
