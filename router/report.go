package router

import (
	"fmt"
	"slices"

	"github.com/gantry-proxy/gantry/config"
)

// Statuses of routers, services and middlewares in a Report, as in
// Traefik's API (pkg/config/runtime).
const (
	// StatusEnabled: in use, no problems.
	StatusEnabled = "enabled"
	// StatusWarning: in use, with the non-critical problems in Errors (an
	// unknown entrypoint next to a known one, a v2 leftover in a v3 rule).
	StatusWarning = "warning"
	// StatusDisabled: not routed; Errors says why.
	StatusDisabled = "disabled"
)

// Report is the status of every object of one generation. Routers are
// keyed by qualified name ("web@docker"); every service and middleware of
// the merged configuration appears, used or not.
type Report struct {
	Routers     map[string]*RouterStatus `json:"routers"`
	Services    map[string]*ObjectStatus `json:"services"`
	Middlewares map[string]*ObjectStatus `json:"middlewares"`
	// TCPRouters … UDPServices are the same for the TCP and UDP objects.
	TCPRouters     map[string]*RouterStatus `json:"tcpRouters,omitempty"`
	TCPServices    map[string]*ObjectStatus `json:"tcpServices,omitempty"`
	TCPMiddlewares map[string]*ObjectStatus `json:"tcpMiddlewares,omitempty"`
	UDPRouters     map[string]*RouterStatus `json:"udpRouters,omitempty"`
	UDPServices    map[string]*ObjectStatus `json:"udpServices,omitempty"`
	// TLS lists problems with certificates, options and stores returned by
	// the builder's BuildTLS; each disables only what it names.
	TLS []string `json:"tls,omitempty"`
	// TLSWarnings lists TLS problems that change nothing served (a TLS
	// 1.3 suite in cipherSuites).
	TLSWarnings []string `json:"tlsWarnings,omitempty"`
	// InternalRouters and InternalMiddlewares are the configuration of the
	// routers Gantry adds itself (Options.Internal) and of their
	// middlewares, as the API shows them (they are in no provider's
	// configuration).
	InternalRouters     map[string]*config.Router     `json:"-"`
	InternalMiddlewares map[string]*config.Middleware `json:"-"`
	// NotFound lists problems with entryPoints.<ep>.http.notFound (each
	// keeps that entrypoint's bare 404).
	NotFound []string `json:"notFound,omitempty"`
}

// RouterStatus is the status of one router.
type RouterStatus struct {
	Status string   `json:"status"` // StatusEnabled, StatusWarning or StatusDisabled
	Errors []string `json:"errors,omitempty"`
	// EntryPoints are the entrypoints as configured (empty: the defaults).
	EntryPoints []string `json:"entryPoints,omitempty"`
	// Priority is the effective priority: the configured one, or len(rule)
	// in bytes when that is 0.
	Priority int `json:"priority"`
	// Using lists the known entrypoints the router is attached to, sorted.
	Using []string `json:"using,omitempty"`
}

// ObjectStatus is the status of one service or middleware.
type ObjectStatus struct {
	Status string   `json:"status"`
	Errors []string `json:"errors,omitempty"`
	// UsedBy lists the qualified names of the routers that refer to the
	// object directly, sorted.
	UsedBy []string `json:"usedBy,omitempty"`
}

func newReport() *Report {
	return &Report{
		Routers: map[string]*RouterStatus{}, Services: map[string]*ObjectStatus{}, Middlewares: map[string]*ObjectStatus{},
		TCPRouters: map[string]*RouterStatus{}, TCPServices: map[string]*ObjectStatus{}, TCPMiddlewares: map[string]*ObjectStatus{},
		UDPRouters: map[string]*RouterStatus{}, UDPServices: map[string]*ObjectStatus{},
		InternalRouters: map[string]*config.Router{}, InternalMiddlewares: map[string]*config.Middleware{},
	}
}

// Problems lists every error and warning in the report, one line each,
// naming the object: `router site@docker: rule: offset 0: Host: expected
// 1 argument, got 2`. Sorted; empty when everything is enabled.
func (r *Report) Problems() []string {
	var out []string
	add := func(kind string, m map[string][]string) {
		for name, errs := range m {
			for _, e := range errs {
				out = append(out, fmt.Sprintf("%s %s: %s", kind, name, e))
			}
		}
	}
	rs := map[string][]string{}
	for n, s := range r.Routers {
		rs[n] = s.Errors
	}
	add("router", rs)
	for kind, routers := range map[string]map[string]*RouterStatus{"tcp router": r.TCPRouters, "udp router": r.UDPRouters} {
		m := map[string][]string{}
		for n, s := range routers {
			m[n] = s.Errors
		}
		add(kind, m)
	}
	for kind, objs := range map[string]map[string]*ObjectStatus{"service": r.Services, "middleware": r.Middlewares,
		"tcp service": r.TCPServices, "tcp middleware": r.TCPMiddlewares, "udp service": r.UDPServices} {
		m := map[string][]string{}
		for n, s := range objs {
			m[n] = s.Errors
		}
		add(kind, m)
	}
	for _, e := range r.NotFound {
		out = append(out, "notFound: "+e)
	}
	for _, e := range r.TLS {
		out = append(out, "tls: "+e)
	}
	for _, e := range r.TLSWarnings {
		out = append(out, "tls: "+e)
	}
	slices.Sort(out)
	return out
}

// Count returns how many routers (HTTP, TCP and UDP) have the given status.
func (r *Report) Count(status string) int {
	n := 0
	for _, m := range []map[string]*RouterStatus{r.Routers, r.TCPRouters, r.UDPRouters} {
		for _, s := range m {
			if s.Status == status {
				n++
			}
		}
	}
	return n
}

// RouterCount is the number of HTTP, TCP and UDP routers.
func (r *Report) RouterCount() int { return len(r.Routers) + len(r.TCPRouters) + len(r.UDPRouters) }

// fail marks an object disabled with err, once per distinct message.
func (s *ObjectStatus) fail(msg string) {
	s.Status = StatusDisabled
	if !slices.Contains(s.Errors, msg) {
		s.Errors = append(s.Errors, msg)
	}
}
