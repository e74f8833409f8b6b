package providers

import (
	"slices"

	"github.com/gantry-proxy/gantry/config"
)

// mergeTCP adds provider p's TCP objects to out, qualified as for HTTP:
// names "x@p", references without "@" qualified with p. bad reports (and
// rejects) a name containing "@".
func mergeTCP(out *config.Configuration, t *config.TCPConfiguration, p string, bad func(kind, name string) bool) {
	if t.Empty() {
		return
	}
	o := out.EnsureTCP()
	for n, r := range t.Routers {
		if !bad("tcpRouter", n) {
			o.Routers[n+"@"+p] = qualifyTCPRouter(r, p)
		}
	}
	for n, s := range t.Services {
		if !bad("tcpService", n) {
			o.Services[n+"@"+p] = qualifyTCPService(s, p)
		}
	}
	for n, m := range t.Middlewares {
		if !bad("tcpMiddleware", n) {
			o.Middlewares[n+"@"+p] = m
		}
	}
	for n, st := range t.ServersTransports {
		if !bad("tcpServersTransport", n) {
			o.ServersTransports[n+"@"+p] = st
		}
	}
}

// mergeUDP is mergeTCP for UDP.
func mergeUDP(out *config.Configuration, u *config.UDPConfiguration, p string, bad func(kind, name string) bool) {
	if u.Empty() {
		return
	}
	o := out.EnsureUDP()
	for n, r := range u.Routers {
		if bad("udpRouter", n) {
			continue
		}
		if r != nil {
			c := *r
			c.Service = Qualify(r.Service, p)
			r = &c
		}
		o.Routers[n+"@"+p] = r
	}
	for n, s := range u.Services {
		if bad("udpService", n) {
			continue
		}
		if s != nil && s.Weighted != nil {
			c := *s
			w := *s.Weighted
			w.Services = qualifyWRR(w.Services, p)
			c.Weighted = &w
			s = &c
		}
		o.Services[n+"@"+p] = s
	}
}

func qualifyWRR(svcs []config.WRRService, p string) []config.WRRService {
	out := slices.Clone(svcs)
	for i := range out {
		out[i].Name = Qualify(out[i].Name, p)
	}
	return out
}

func qualifyTCPRouter(r *config.TCPRouter, p string) *config.TCPRouter {
	if r == nil {
		return nil
	}
	c := *r
	c.Service = Qualify(r.Service, p)
	c.Middlewares = qualifyAll(r.Middlewares, p)
	if r.TLS != nil && r.TLS.Options != "" && r.TLS.Options != DefaultTLSName {
		t := *r.TLS
		t.Options = Qualify(t.Options, p)
		c.TLS = &t
	}
	return &c
}

func qualifyTCPService(s *config.TCPService, p string) *config.TCPService {
	if s == nil {
		return nil
	}
	c := *s
	switch {
	case s.LoadBalancer != nil:
		lb := *s.LoadBalancer
		lb.ServersTransport = Qualify(lb.ServersTransport, p)
		c.LoadBalancer = &lb
	case s.Weighted != nil:
		w := *s.Weighted
		w.Services = qualifyWRR(w.Services, p)
		c.Weighted = &w
	}
	return &c
}

// splitTCP picks the TCP and UDP objects named "x@provider" (suffix
// "@provider") out of c into out, renamed "x".
func splitTCP(out, c *config.Configuration, suffix string) {
	if !c.TCP.Empty() {
		o := out.EnsureTCP()
		pick(o.Routers, c.TCP.Routers, suffix)
		pick(o.Services, c.TCP.Services, suffix)
		pick(o.Middlewares, c.TCP.Middlewares, suffix)
		pick(o.ServersTransports, c.TCP.ServersTransports, suffix)
		if o.Empty() {
			out.TCP = nil
		}
	}
	if !c.UDP.Empty() {
		o := out.EnsureUDP()
		pick(o.Routers, c.UDP.Routers, suffix)
		pick(o.Services, c.UDP.Services, suffix)
		if o.Empty() {
			out.UDP = nil
		}
	}
}
