package crd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// serviceName is the name a Service reference is published under:
// "<ns>-<name>-<port>" for a Kubernetes Service, "<ns>-<name>" for a
// TraefikService, and "x@provider" for another provider's service
// ("x@kubernetescrd" is this provider's x).
func serviceName(ns string, s Service) string {
	if s.Kind == "" || s.Kind == "Service" {
		return providers.Normalize(fmt.Sprintf("%s-%s-%s", ns, s.Name, s.Port.String()))
	}
	name, prov, ok := cutLast(s.Name, "@")
	if !ok {
		return providers.Normalize(makeID(ns, s.Name))
	}
	if prov == ProviderName {
		return providers.Normalize(makeID(ns, name))
	}
	return providers.Normalize(name) + "@" + prov
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// service resolves one service reference made by an object of namespace
// from: the name to reference and, for a Kubernetes Service, the load
// balancer to publish under that name (nil for a TraefikService or another
// provider's service).
func (b *builder) service(from string, s Service) (string, *config.Service, error) {
	ns := s.Namespace
	if strings.Contains(s.Name, "@") {
		if err := b.crossProvider("service", from, s.Name); err != nil {
			return "", nil, err
		}
	} else {
		if ns == "" {
			ns = from
		}
		if ns != from && !b.opts.AllowCrossNamespace {
			return "", nil, crossNamespaceError("service", ns, s.Name, from)
		}
	}
	switch s.Kind {
	case "", "Service":
		lb, err := b.serversLB(ns, s)
		if err != nil {
			return "", nil, err
		}
		return serviceName(ns, s), lb, nil
	case "TraefikService":
		return serviceName(ns, s), nil, nil
	}
	return "", nil, fmt.Errorf("kind %q: want Service or TraefikService", s.Kind)
}

// serversLB builds the load balancer of a Kubernetes Service reference.
func (b *builder) serversLB(ns string, s Service) (*config.Service, error) {
	if s.NodePortLB {
		return nil, errors.New("nodePortLB is not supported by Gantry (it runs in the cluster: use the Service's endpoints or nativeLB)")
	}
	lb := &config.ServersLoadBalancer{PassHostHeader: s.PassHostHeader, Sticky: s.Sticky}
	switch s.Strategy {
	case "", "RoundRobin", "wrr":
		// Traefik's deprecated RoundRobin is wrr, the default.
	case "p2c", "hrw", "leasttime":
		lb.Strategy = s.Strategy
	default:
		return nil, fmt.Errorf("strategy %q: want wrr, p2c, hrw or leasttime", s.Strategy)
	}
	if err := scheme(s.Scheme); err != nil {
		return nil, err
	}
	t, err := b.target(ns, s.Name, s.Port, s.NativeLB)
	if err != nil {
		return nil, err
	}
	if s.HealthCheck != nil && t.Service.Spec.Type != "ExternalName" {
		return nil, fmt.Errorf("healthCheck: allowed only for ExternalName services (Kubernetes checks the endpoints of %s/%s)", ns, s.Name)
	}
	lb.HealthCheck = s.HealthCheck
	lb.PassiveHealthCheck = s.PassiveHealthCheck
	lb.Servers = t.Servers(s.Scheme)
	if rf := s.ResponseForwarding; rf != nil && rf.FlushInterval != "" {
		d, err := config.ParseDuration(rf.FlushInterval)
		if err != nil {
			return nil, fmt.Errorf("responseForwarding.flushInterval: %w", err)
		}
		lb.ResponseForwarding = &config.ResponseForwarding{FlushInterval: d}
	}
	if s.ServersTransport != "" {
		lb.ServersTransport, err = b.resolveRef("serversTransport", ns, ObjectRef{Name: s.ServersTransport})
		if err != nil {
			return nil, err
		}
	}
	svc := &config.Service{LoadBalancer: lb}
	for i, m := range s.Middlewares {
		name, err := b.resolveRef("middleware", ns, m)
		if err != nil {
			return nil, fmt.Errorf("middlewares[%d]: %w", i, err)
		}
		svc.Middlewares = append(svc.Middlewares, name)
	}
	return svc, nil
}

// weighted builds a weighted service over refs (weight default 1),
// publishing each Kubernetes Service's load balancer.
func (b *builder) weighted(from string, refs []Service, sticky *config.Sticky) (*config.Service, error) {
	w := &config.WeightedRoundRobin{Sticky: sticky}
	for i, r := range refs {
		name, lb, err := b.service(from, r)
		if err != nil {
			return nil, fmt.Errorf("services[%d]: %w", i, err)
		}
		b.publish(name, lb)
		w.Services = append(w.Services, config.WRRService{Name: name, Weight: weightOrOne(r.Weight)})
	}
	return &config.Service{Weighted: w}, nil
}

func weightOrOne(w *int) *int {
	if w != nil {
		return w
	}
	one := 1
	return &one
}

// traefikServices publishes each TraefikService as "<ns>-<name>".
func (b *builder) traefikServices(objs []*TraefikService) {
	publishEach(b, "TraefikService", "service", objs, b.conf.HTTP.Services, func(o *TraefikService, _ string) (*config.Service, string, error) {
		return b.traefikService(o)
	})
}

// traefikService builds one TraefikService; field locates an error.
func (b *builder) traefikService(o *TraefikService) (*config.Service, string, error) {
	sp, ns := o.Spec, o.Namespace
	switch {
	case sp.Weighted != nil:
		svc, err := b.weighted(ns, sp.Weighted.Services, sp.Weighted.Sticky)
		return svc, "spec.weighted", err
	case sp.Mirroring != nil:
		m := sp.Mirroring
		main, lb, err := b.service(ns, m.Service)
		if err != nil {
			return nil, "spec.mirroring", err
		}
		b.publish(main, lb)
		out := &config.Mirroring{Service: main, MirrorBody: m.MirrorBody, MaxBodySize: m.MaxBodySize}
		for i, mr := range m.Mirrors {
			name, lb, err := b.service(ns, mr.Service)
			if err != nil {
				return nil, fmt.Sprintf("spec.mirroring.mirrors[%d]", i), err
			}
			b.publish(name, lb)
			out.Mirrors = append(out.Mirrors, config.MirrorService{Name: name, Percent: mr.Percent})
		}
		return &config.Service{Mirroring: out}, "", nil
	case sp.HighestRandomWeight != nil:
		h := &config.HighestRandomWeight{}
		for i, r := range sp.HighestRandomWeight.Services {
			name, lb, err := b.service(ns, r)
			if err != nil {
				return nil, fmt.Sprintf("spec.highestRandomWeight.services[%d]", i), err
			}
			b.publish(name, lb)
			h.Services = append(h.Services, config.HRWService{Name: name, Weight: weightOrOne(r.Weight)})
		}
		return &config.Service{HighestRandomWeight: h}, "", nil
	case sp.Failover != nil:
		f := sp.Failover
		main, lb, err := b.service(ns, f.Service)
		if err != nil {
			return nil, "spec.failover.service", err
		}
		fb, fblb, err := b.service(ns, f.Fallback)
		if err != nil {
			return nil, "spec.failover.fallback", err
		}
		b.publish(main, lb)
		b.publish(fb, fblb)
		out := &config.Failover{Service: main, Fallback: fb}
		if e := f.Errors; len(e.Status) > 0 || e.MaxRequestBodyBytes != nil {
			out.Errors = &e
		}
		return &config.Service{Failover: out}, "", nil
	}
	return nil, "spec", errors.New("none of weighted, mirroring, highestRandomWeight, failover is set")
}

// publish adds a Kubernetes Service's load balancer (nil: nothing to add)
// under name, made by the object being translated (b.at). Two references
// to the same Service port share it; the last one visited wins, as in
// Traefik.
func (b *builder) publish(name string, lb *config.Service) {
	if lb == nil {
		return
	}
	b.conf.HTTP.Services[name] = lb
	b.origins["service "+name] = b.at
}
