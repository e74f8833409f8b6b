package generation

import "github.com/gantry-proxy/gantry/config"

// tracksHealth reports whether the named service reports its health to a
// parent as Traefik requires of a failover's main service (and of its
// fallback when the failover has healthCheck): a loadBalancer with
// healthCheck, a weighted, highestRandomWeight or failover service with
// healthCheck, a mirroring service with healthCheck whose own service
// tracks health. Internal services never do.
// Source: Traefik v3.7 pkg/server/service/service.go
// (getFailoverServiceHandler) and each balancer's RegisterStatusUpdater.
func (g *Generation) tracksHealth(name string) bool {
	for range 64 { // mirroring chains; a cycle was refused when building
		var s *config.Service
		if g.m.Config.HTTP != nil {
			s = g.m.Config.HTTP.Services[name]
		}
		switch {
		case s == nil:
			return false
		case s.LoadBalancer != nil:
			return s.LoadBalancer.HealthCheck != nil
		case s.Weighted != nil:
			return s.Weighted.HealthCheck != nil
		case s.HighestRandomWeight != nil:
			return s.HighestRandomWeight.HealthCheck != nil
		case s.Failover != nil:
			return s.Failover.HealthCheck != nil
		case s.Mirroring != nil:
			if s.Mirroring.HealthCheck == nil {
				return false
			}
			name = s.Mirroring.Service
		default:
			return false
		}
	}
	return false
}
