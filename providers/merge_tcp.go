package providers

import (
	"github.com/gantry-proxy/gantry/config"
)

func qualifyTCPRouter(r *config.TCPRouter, p string) *config.TCPRouter {
	return qualified(r, func(c *config.TCPRouter) {
		c.Service = Qualify(c.Service, p)
		c.Middlewares = qualifyAll(c.Middlewares, p)
		c.TLS = qualifyTLS(c.TLS, func(t *config.RouterTCPTLSConfig) *string { return &t.Options }, p)
	})
}

func qualifyTCPService(s *config.TCPService, p string) *config.TCPService {
	return qualified(s, func(c *config.TCPService) {
		switch {
		case c.LoadBalancer != nil:
			c.LoadBalancer = qualified(c.LoadBalancer, func(lb *config.TCPServersLoadBalancer) {
				lb.ServersTransport = Qualify(lb.ServersTransport, p)
			})
		case c.Weighted != nil:
			c.Weighted = qualified(c.Weighted, func(w *config.TCPWeightedRoundRobin) { w.Services = qualifyNames(w.Services, wrrName, p) })
		}
	})
}

func qualifyUDPRouter(r *config.UDPRouter, p string) *config.UDPRouter {
	return qualified(r, func(c *config.UDPRouter) { c.Service = Qualify(c.Service, p) })
}

func qualifyUDPService(s *config.UDPService, p string) *config.UDPService {
	if s == nil || s.Weighted == nil {
		return s
	}
	return qualified(s, func(c *config.UDPService) {
		c.Weighted = qualified(c.Weighted, func(w *config.UDPWeightedRoundRobin) { w.Services = qualifyNames(w.Services, wrrName, p) })
	})
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
