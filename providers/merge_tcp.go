package providers

import (
	"github.com/gantry-proxy/gantry/config"
)

func qualifyTCPRouter(r *config.TCPRouter, p string) *config.TCPRouter {
	if r == nil {
		return nil
	}
	c := *r
	c.Service = Qualify(r.Service, p)
	c.Middlewares = qualifyAll(r.Middlewares, p)
	c.TLS = qualifyTLS(r.TLS, func(t *config.RouterTCPTLSConfig) *string { return &t.Options }, p)
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
		w.Services = qualifyNames(w.Services, wrrName, p)
		c.Weighted = &w
	}
	return &c
}

func qualifyUDPRouter(r *config.UDPRouter, p string) *config.UDPRouter {
	if r == nil {
		return nil
	}
	c := *r
	c.Service = Qualify(r.Service, p)
	return &c
}

func qualifyUDPService(s *config.UDPService, p string) *config.UDPService {
	if s == nil || s.Weighted == nil {
		return s
	}
	c, w := *s, *s.Weighted
	w.Services = qualifyNames(w.Services, wrrName, p)
	c.Weighted = &w
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
