package router

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// UDPHandler chooses the server of a new UDP session: it returns a
// "host:port" (weighted round robin over the service's servers), or an
// error when the service has none. Safe for concurrent use.
type UDPHandler interface {
	Pick() (string, error)
}

// UDPRoute is the one UDP router of a UDP entrypoint.
type UDPRoute struct {
	Name    string
	Handler UDPHandler
}

// compileTCP builds the TCP routers per TCP entrypoint and the UDP router
// per UDP entrypoint into t. perEP holds the placed HTTP routers (their TLS
// hosts decide precedence on an entrypoint shared with TCP).
func (c *compiler) compileTCP(t *Table, perEP map[string][]placed) {
	cfg := c.m.Config
	tc := cfg.TCP
	if tc == nil {
		tc = &config.TCPConfiguration{}
	}
	uc := cfg.UDP
	if uc == nil {
		uc = &config.UDPConfiguration{}
	}
	c.tcpDeprecations(tc)
	c.tcpRoutes(t, perEP, tc)
	c.udpRoutes(t, uc)
}

// tcpDeprecations warns on the TCP services and middlewares that use a
// deprecated field Traefik v3.7 still applies.
func (c *compiler) tcpDeprecations(tc *config.TCPConfiguration) {
	for name, s := range tc.Services {
		// Traefik v3.7 warns about the deprecated load-balancer fields and
		// ignores them beside a serversTransport (pkg/tcp/dialer.go).
		st := c.report.TCPServices[name]
		if s == nil || s.LoadBalancer == nil || st.Status != StatusEnabled {
			continue
		}
		lb := s.LoadBalancer
		for field, set := range map[string]bool{"proxyProtocol": lb.ProxyProtocol != nil, "terminationDelay": lb.TerminationDelay != nil} {
			if !set {
				continue
			}
			msg := "loadBalancer." + field + " is deprecated: set it on a serversTransport"
			if lb.ServersTransport != "" {
				msg += "; ignored, serversTransport " + lb.ServersTransport + " decides"
			}
			st.Status = StatusWarning
			st.Errors = append(st.Errors, msg)
		}
		slices.Sort(st.Errors)
	}
	for name, m := range tc.Middlewares {
		// Traefik v3.7 logs "IPWhiteList is deprecated, please use
		// IPAllowList instead." and still applies it.
		if st := c.report.TCPMiddlewares[name]; m != nil && m.IPWhiteList != nil && st.Status == StatusEnabled {
			st.Status = StatusWarning
			st.Errors = append(st.Errors, "ipWhiteList is deprecated (Traefik v2 name): it still filters; rename it ipAllowList")
		}
	}
}

// tcpRoutes builds the TCP routers of tc (Builder.BuildTCP) and installs, per TCP
// entrypoint with any, their plain and TLS muxes in t, with the HTTPS
// hosts of the HTTP routers placed there (perEP): those decide which of
// HTTP and TCP a TLS connection goes to.
func (c *compiler) tcpRoutes(t *Table, perEP map[string][]placed, tc *config.TCPConfiguration) {
	plain, secure := map[string][]*tcpmux.Route{}, map[string][]*tcpmux.Route{}
	for _, name := range slices.Sorted(maps.Keys(tc.Routers)) {
		r := tc.Routers[name]
		st := &RouterStatus{Status: StatusEnabled}
		c.report.TCPRouters[name] = st
		rt := c.tcpRouter(name, r, st)
		if !settle(st, rt != nil) {
			continue
		}
		for _, ep := range st.Using {
			if r.TLS != nil {
				secure[ep] = append(secure[ep], rt)
			} else {
				plain[ep] = append(plain[ep], rt)
			}
		}
	}
	for _, ep := range c.opts.EntryPoints {
		if ep.UDP {
			continue
		}
		e := &tcpmux.EntryPoint{Plain: tcpmux.NewMux(plain[ep.Name]), TLS: tcpmux.NewMux(secure[ep.Name])}
		if e.Empty() {
			continue
		}
		e.HTTPSHosts = map[string]bool{}
		httpsBy := map[string][]string{} // host -> HTTPS routers naming it
		var plainHTTP []string
		for _, p := range perEP[ep.Name] {
			if !p.tls {
				plainHTTP = append(plainHTTP, p.route.name)
				continue
			}
			e.HTTPS = true
			hosts := ruleHosts(p.route.rule)
			if len(hosts) == 0 {
				e.HTTPSCatchAll = true
			}
			for _, h := range hosts {
				e.HTTPSHosts[h] = true
				httpsBy[h] = append(httpsBy[h], p.route.name)
			}
		}
		c.shadowWarnings(ep.Name, e, httpsBy, plainHTTP, tc.Routers)
		t.tcp[ep.Name] = e
	}
}

// udpRoutes builds the UDP routers of uc (Builder.BuildUDP): one router per UDP
// entrypoint. Traefik silently keeps the one with the greatest name (case
// 046); Gantry keeps the smallest name and disables the others, saying
// which router holds the entrypoint.
func (c *compiler) udpRoutes(t *Table, uc *config.UDPConfiguration) {
	for _, name := range slices.Sorted(maps.Keys(uc.Routers)) {
		r := uc.Routers[name]
		st := &RouterStatus{Status: StatusEnabled}
		c.report.UDPRouters[name] = st
		h := c.udpRouter(name, r, st)
		if h == nil {
			st.Status = StatusDisabled
			continue
		}
		var using []string
		for _, ep := range st.Using {
			if cur, taken := t.udp[ep]; taken {
				st.Errors = append(st.Errors, fmt.Sprintf("entrypoint %q is already served by UDP router %s (a UDP entrypoint has one router)", ep, cur.Name))
				continue
			}
			t.udp[ep] = &UDPRoute{Name: name, Handler: h}
			using = append(using, ep)
		}
		st.Using = using
		switch {
		case len(using) == 0:
			st.Status = StatusDisabled
		case len(st.Errors) > 0:
			st.Status = StatusWarning
		}
	}
}

func (c *compiler) tcpRouter(name string, r *config.TCPRouter, st *RouterStatus) *tcpmux.Route {
	if r == nil {
		st.Errors = append(st.Errors, "empty definition")
		return nil
	}
	k := c.startCheck(config.KindTCPRouter, name, "TCP", r.EntryPoints, st)
	fail := k.fail
	var (
		m        tcpmux.Matcher
		catchAll bool
	)
	if strings.TrimSpace(r.Rule) != "" {
		if r.RuleSyntax == "v2" || (r.RuleSyntax == "" && c.opts.DefaultRuleSyntax == "v2") {
			st.Errors = append(st.Errors, "ruleSyntax v2 is read as v3 for TCP routers (the TCP matchers are the same)")
		}
		var err error
		if m, catchAll, err = tcpmux.Compile(r.Rule); err != nil {
			fail("rule: %v", err)
		}
	}
	st.Priority = r.Priority
	if st.Priority == 0 {
		st.Priority = tcpmux.Priority(r.Rule, catchAll)
	}
	if !useObject(c.report.TCPServices, "tcp service", r.Service, name, fail) && r.Service != "" {
		fail("tcp service %q does not exist", r.Service)
	}
	for _, mw := range r.Middlewares {
		if !useObject(c.report.TCPMiddlewares, "tcp middleware", mw, name, fail) {
			fail("tcp middleware %q does not exist", mw)
		}
	}
	var h tcpmux.Handler
	build := func(b Builder) (err error) { h, err = b.BuildTCP(c.ctx, name, r); return err }
	if !c.buildL4(k, build, func() bool { return h == nil }) {
		return nil
	}
	return &tcpmux.Route{Name: name, Priority: st.Priority, CatchAll: catchAll, Terminate: r.TLS != nil && !r.TLS.Passthrough, Match: m, Handler: h}
}

func (c *compiler) udpRouter(name string, r *config.UDPRouter, st *RouterStatus) UDPHandler {
	if r == nil {
		st.Errors = append(st.Errors, "empty definition")
		return nil
	}
	k := c.startCheck(config.KindUDPRouter, name, "UDP", r.EntryPoints, st)
	fail := k.fail
	if !useObject(c.report.UDPServices, "udp service", r.Service, name, fail) && r.Service != "" {
		fail("udp service %q does not exist", r.Service)
	}
	var h UDPHandler
	build := func(b Builder) (err error) { h, err = b.BuildUDP(c.ctx, name, r); return err }
	if !c.buildL4(k, build, func() bool { return h == nil }) {
		return nil
	}
	return h
}

// buildL4 builds a TCP or UDP router's handler with build, unless its
// checks failed (k) or there is no builder; ok when build gave a handler
// (none: noHandler reports true afterwards).
func (c *compiler) buildL4(k *routerCheck, build func(Builder) error, noHandler func() bool) bool {
	if k.failed {
		return false
	}
	if c.b == nil {
		k.st.Errors = append(k.st.Errors, "no handler builder")
		return false
	}
	err := build(c.b)
	return c.built(k.st, noHandler(), err)
}

// built reports whether a router's handler was built (err nil and a
// handler: noHandler false); when not, the error is on st and on the
// service or middleware it names (an *ObjectError).
func (c *compiler) built(st *RouterStatus, noHandler bool, err error) bool {
	if err == nil && noHandler {
		err = errors.New("builder returned no handler")
	}
	if err != nil {
		if oe, ok := errors.AsType[*ObjectError](err); ok {
			c.objectFailed(oe)
		}
		st.Errors = append(st.Errors, err.Error())
		return false
	}
	return true
}

// shadowWarnings warns about TCP routers of entrypoint ep that can never
// be reached, or that make its HTTP routers unreachable (case 045, 051),
// naming the routers on both sides:
//
//   - a TLS router whose HostSNI names are all served by HTTPS routers:
//     an HTTPS router for the SNI takes the connection first (Traefik
//     ServeTCP precedence), so the TCP router never gets one;
//   - a router without TLS naming a host in HostSNI: a connection without
//     TLS has no SNI, so the rule never matches (Traefik refuses it);
//   - a router without TLS matching every connection on an entrypoint
//     with no TLS routes and no HTTPS routers: connections are routed to
//     it before any byte is read, so the entrypoint's HTTP routers never
//     see a request.
func (c *compiler) shadowWarnings(ep string, e *tcpmux.EntryPoint, httpsBy map[string][]string, plainHTTP []string, routers map[string]*config.TCPRouter) {
	warn := func(name, msg string) { warnStatus(c.report.TCPRouters, name, msg) }
	for _, rt := range e.TLS.Routes() {
		hosts, ok := tcpmux.SNIHosts(routers[rt.Name].Rule)
		if !ok {
			continue
		}
		var by []string
		shadowed := true
		for _, h := range hosts {
			names := httpsBy[h]
			if len(names) == 0 {
				if i := strings.IndexByte(h, '.'); i > 0 && !strings.HasPrefix(h, "*.") {
					names = httpsBy["*"+h[i:]]
				}
			}
			if len(names) == 0 {
				shadowed = false
				break
			}
			by = append(by, names...)
		}
		if shadowed && len(hosts) > 0 {
			slices.Sort(by)
			by = slices.Compact(by)
			msg := fmt.Sprintf("never receives a connection on entrypoint %s: HTTPS router %s serves the same host (%s), and an HTTPS router for the SNI takes precedence over TCP routers", ep, strings.Join(by, ", "), strings.Join(hosts, ", "))
			warn(rt.Name, msg)
			for _, n := range by {
				c.warnRouter(n, fmt.Sprintf("takes every TLS connection for %s on entrypoint %s, so TCP router %s never receives one", strings.Join(hosts, ", "), ep, rt.Name))
			}
		}
	}
	for _, rt := range e.Plain.Routes() {
		if hosts, ok := tcpmux.SNIHosts(routers[rt.Name].Rule); ok && len(hosts) > 0 {
			warn(rt.Name, fmt.Sprintf("HostSNI(`%s`) never matches: the router has no tls block, and a connection without TLS has no SNI (only HostSNI(`*`) or ClientIP can route it)", hosts[0]))
		}
	}
	if e.TLS.Len() == 0 && !e.HTTPS && len(plainHTTP) > 0 {
		for _, rt := range e.Plain.Routes() {
			if !rt.CatchAll {
				continue
			}
			slices.Sort(plainHTTP)
			warn(rt.Name, fmt.Sprintf("takes every connection of entrypoint %s before any byte is read (it has no TLS routers), so its HTTP routers never receive a request: %s", ep, strings.Join(plainHTTP, ", ")))
			for _, n := range plainHTTP {
				c.warnRouter(n, fmt.Sprintf("never receives a request on entrypoint %s: TCP router %s (HostSNI(`*`), no TLS) takes every connection there", ep, rt.Name))
			}
			break
		}
	}
}
