package ingressnginx

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	netv1 "k8s.io/api/networking/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

func portString(p netv1.ServiceBackendPort) string {
	if p.Name != "" {
		return p.Name
	}
	return strconv.Itoa(int(p.Number))
}

// lb builds the load balancer of backend for a location, with the main
// Ingress's backend-protocol, timeouts and affinity.
func (t *translator) lb(loc *location, ns string, b netv1.IngressServiceBackend) *config.ServersLoadBalancer {
	s := loc.in.s
	lb := &config.ServersLoadBalancer{}
	addrs, fenced, err := t.cl.Endpoints(ns, b.Name, b.Port)
	if err != nil {
		t.problem(loc.in, providers.SeverityWarning, []string{"service " + loc.name}, "service %s/%s port %s: %v (answers 503)", ns, b.Name, portString(b.Port), err)
	}
	for _, a := range addrs {
		lb.Servers = append(lb.Servers, config.Server{URL: s.scheme + "://" + a})
	}
	for _, a := range fenced { // affinity cookies pinned to them keep them
		lb.Servers = append(lb.Servers, config.Server{URL: s.scheme + "://" + a, Fenced: true})
	}
	if st := t.transport(loc); st != "" {
		lb.ServersTransport = st
	}
	if s.affinity {
		c := &config.Cookie{Name: s.cookie.name, Secure: s.cookie.secure, HTTPOnly: true, SameSite: s.cookie.sameSite, MaxAge: s.cookie.maxAge, Domain: s.cookie.domain}
		path := s.cookie.path
		if path == "" {
			// ingress-nginx: the location's path (a regex path needs
			// session-cookie-path; "/" stands in for it).
			path = loc.path
			if loc.regex {
				path = "/"
			}
		}
		c.Path = &path
		lb.Sticky = &config.Sticky{Cookie: c}
	}
	return lb
}

// transport declares the location's serversTransport when its
// annotations need one, and returns its name ("" none).
func (t *translator) transport(loc *location) string {
	s := loc.in.s
	if !s.insecure && s.timeouts == (timeouts{}) {
		return ""
	}
	name := loc.in.ing.Namespace + "-" + loc.in.ing.Name
	st := &config.ServersTransport{TLSClientCommon: config.TLSClientCommon{InsecureSkipVerify: s.insecure}}
	if s.timeouts.connect > 0 || s.timeouts.read > 0 {
		st.ForwardingTimeouts = &config.ForwardingTimeouts{
			DialTimeout:           seconds(s.timeouts.connect),
			ResponseHeaderTimeout: seconds(s.timeouts.read),
		}
	}
	t.conf.HTTP.ServersTransports[name] = st
	return name
}

// seconds is n seconds as a forwarding timeout; nil (the default) when
// n is not positive.
func seconds(n int) *config.Duration {
	if n <= 0 {
		return nil
	}
	d := config.Duration(time.Duration(n) * time.Second)
	return &d
}

// service declares the services of a location and returns the one its
// routers use: the main backend, or a weighted split with the canary.
func (t *translator) service(loc *location) string {
	ns := loc.in.ing.Namespace
	t.conf.HTTP.Services[loc.name] = &config.Service{LoadBalancer: t.lb(loc, ns, loc.backend)}
	c := loc.canary
	if c == nil {
		return loc.name
	}
	// The canary inherits the main Ingress's annotations (ingress-nginx).
	t.conf.HTTP.Services[loc.name+"-canary"] = &config.Service{LoadBalancer: t.lb(loc, ns, c.backend)}
	cs := c.ing.s
	if cs.canaryWeight <= 0 {
		return loc.name
	}
	main, canary := cs.canaryWeightTotal-cs.canaryWeight, cs.canaryWeight
	w := &config.WeightedRoundRobin{Services: []config.WRRService{{Name: loc.name, Weight: &main}, {Name: loc.name + "-canary", Weight: &canary}}}
	if loc.in.s.affinity {
		// ingress-nginx's default affinity-canary-behavior "sticky": a
		// client sent to the canary stays there.
		n, p := loc.in.s.cookie.name+"-canary", "/"
		w.Sticky = &config.Sticky{Cookie: &config.Cookie{Name: n, HTTPOnly: true, Path: &p}}
	}
	t.conf.HTTP.Services[loc.name+"-weighted"] = &config.Service{Weighted: w}
	return loc.name + "-weighted"
}

// canaryRouters adds the routers of canary-by-header and canary-by-cookie,
// disjoint, above the location's own, in ingress-nginx's precedence:
// header, then cookie, then weight. "always" sends to the canary, "never"
// to the main backend; any other value falls through.
func (t *translator) canaryRouters(loc *location, plain, secure *config.Router) {
	cs := loc.canary.ing.s
	var toCanary, toMain []string
	h := cs.canaryHeader
	cookie := func(v string) string {
		return "HeaderRegexp(`Cookie`, `(^|;\\s*)" + regexp.QuoteMeta(cs.canaryCookie) + "=" + v + "(;|$)`)"
	}
	switch {
	case h != "" && cs.canaryHeaderValue != "":
		toCanary = append(toCanary, "Header(`"+h+"`, `"+cs.canaryHeaderValue+"`)")
	case h != "" && cs.canaryHeaderPattern != "":
		toCanary = append(toCanary, "HeaderRegexp(`"+h+"`, `"+cs.canaryHeaderPattern+"`)")
	case h != "":
		toCanary = append(toCanary, "Header(`"+h+"`, `always`)")
		toMain = append(toMain, "Header(`"+h+"`, `never`)")
	}
	if cs.canaryCookie != "" {
		guard := ""
		if len(toCanary) > 0 {
			guard = "!(" + toCanary[0] + ") && "
			if len(toMain) > 0 {
				guard += "!(" + toMain[0] + ") && "
			}
		}
		toCanary = append(toCanary, "("+guard+"!"+cookie("never")+" && "+cookie("always")+")")
		toMain = append(toMain, "("+guard+cookie("never")+")")
	}
	add := func(suffix, svc string, conds []string) {
		if len(conds) == 0 {
			return
		}
		for _, base := range []*config.Router{plain, secure} {
			r := *base
			r.Rule = "(" + base.Rule + ") && (" + strings.Join(conds, " || ") + ")"
			r.Priority = base.Priority + 2
			r.Service = svc
			r.Middlewares = slices.Clone(base.Middlewares)
			name := loc.name + suffix
			if base.TLS != nil {
				name += "-tls"
			}
			t.conf.HTTP.Routers[name] = &r
		}
	}
	add("-canary", loc.name+"-canary", toCanary)
	add("-main", loc.name, toMain)
}
