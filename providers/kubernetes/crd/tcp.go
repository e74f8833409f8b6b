package crd

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// ingressRouteTCPs publishes one TCP router per route, named like HTTP
// routers, with its service of the same name (a weighted service over
// "<router>-<service>-<port>" children when the route lists several).
func (b *builder) ingressRouteTCPs(objs []*IngressRouteTCP) {
	for _, o := range objs {
		src, ok := b.admitRoutes("IngressRouteTCP", o.Namespace, o.Name, o.Spec.IngressClassName, o.Annotations, len(o.Spec.Routes))
		if !ok {
			continue
		}
		tls := o.Spec.TLS
		if tls != nil && !tls.Passthrough && tls.SecretName != "" {
			if err := b.addCertificate(o.Namespace, tls.SecretName, nil); err != nil {
				b.problem(providers.SeverityError, src, nil, "spec.tls.secretName", err)
			}
		}
		name := objectName(o.Name, o.GenerateName)
		for i, r := range o.Spec.Routes {
			field := fmt.Sprintf("spec.routes[%d]", i)
			rn := tcpRouterName(o.Namespace, name, r.Match)
			obj := []string{config.KindTCPRouter + " " + rn}
			t := b.conf.EnsureTCP()
			if _, dup := t.Routers[rn]; dup {
				b.errorf(src, obj, field+".match", "another route has the same match %q: this route is ignored", r.Match)
				continue
			}
			rt, f, err := b.routeTCP(o, rn, r)
			if err != nil {
				b.errorf(src, obj, field+f, "%v", err)
				continue
			}
			t.Routers[rn] = rt
			b.origins[config.KindTCPRouter+" "+rn] = src
		}
	}
}

// routeTCP builds TCP router rn and its services.
func (b *builder) routeTCP(o *IngressRouteTCP, rn string, r RouteTCP) (*config.TCPRouter, string, error) {
	if f, err := checkRoute(r.Match, len(r.Services), len(r.Middlewares)); err != nil {
		return nil, f, err
	}
	if len(r.Services) == 0 {
		return nil, ".services", errors.New("a TCP route needs a service")
	}
	rt := &config.TCPRouter{RouterCommon: config.RouterCommon{EntryPoints: o.Spec.EntryPoints, Rule: r.Match, RuleSyntax: r.Syntax, Priority: r.Priority, Service: rn}}
	for i, m := range r.Middlewares {
		name, err := b.resolveRef("middlewareTCP", o.Namespace, m)
		if err != nil {
			return nil, fmt.Sprintf(".middlewares[%d]", i), err
		}
		rt.Middlewares = append(rt.Middlewares, name)
	}
	if t := o.Spec.TLS; t != nil {
		opts, err := b.tlsOptionsName(o.Namespace, t.Options)
		if err != nil {
			return nil, ".tls.options", err
		}
		rt.TLS = &config.RouterTCPTLSConfig{RouterTLSConfig: config.RouterTLSConfig{Options: opts, CertResolver: t.CertResolver, Domains: t.Domains}, Passthrough: t.Passthrough}
	}
	services := map[string]*config.TCPService{}
	if len(r.Services) == 1 {
		lb, err := b.serviceTCP(o.Namespace, r.Services[0])
		if err != nil {
			return nil, ".services[0]", err
		}
		services[rn] = lb
	} else {
		w := &config.TCPWeightedRoundRobin{}
		for i, s := range r.Services {
			lb, err := b.serviceTCP(o.Namespace, s)
			if err != nil {
				return nil, fmt.Sprintf(".services[%d]", i), err
			}
			child := fmt.Sprintf("%s-%s-%s", rn, s.Name, s.Port.String())
			services[child] = lb
			w.Services = append(w.Services, config.WRRService{Name: child, Weight: weightOrOne(s.Weight)})
		}
		services[rn] = &config.TCPService{Weighted: w}
	}
	t := b.conf.EnsureTCP()
	for n, s := range services {
		t.Services[n] = s
		b.origins[config.KindTCPService+" "+n] = b.at
	}
	return rt, "", nil
}

// serviceTCP builds the load balancer of one Kubernetes Service port.
func (b *builder) serviceTCP(from string, s ServiceTCP) (*config.TCPService, error) {
	ns, addrs, err := b.l4Addresses(from, s.ServicePort)
	if err != nil {
		return nil, err
	}
	lb := &config.TCPServersLoadBalancer{ProxyProtocol: s.ProxyProtocol}
	for _, a := range addrs {
		lb.Servers = append(lb.Servers, config.TCPServer{Address: a, TLS: s.TLS})
	}
	if s.ServersTransport != "" {
		lb.ServersTransport, err = b.resolveRef("serversTransportTCP", ns, ObjectRef{Name: s.ServersTransport})
		if err != nil {
			return nil, err
		}
	} else if s.TerminationDelay != nil {
		lb.TerminationDelay = s.TerminationDelay
	}
	return &config.TCPService{LoadBalancer: lb}, nil
}

// l4Addresses resolves the Service port s of a TCP or UDP route in
// namespace from to its namespace and "host:port" servers: the routable
// endpoints only (a layer-4 service has no sticky session for a fenced
// one to keep). A Service whose endpoints are all terminating is refused
// as empty unless allowEmptyServices; nodePortLB, and another namespace
// without allowCrossNamespace, are refused.
func (b *builder) l4Addresses(from string, s ServicePort) (ns string, addrs []string, err error) {
	ns = cmp.Or(s.Namespace, from)
	switch {
	case s.NodePortLB:
		return "", nil, errors.New("nodePortLB is not supported by Gantry (it runs in the cluster: use the Service's endpoints or nativeLB)")
	case ns != from && !b.opts.AllowCrossNamespace:
		return "", nil, crossNamespaceError("service", ns, s.Name, from)
	}
	t, err := b.target(ns, s.Name, s.Port, s.NativeLB)
	if err == nil && len(t.Addrs) == 0 && !b.opts.AllowEmptyServices {
		err = fmt.Errorf("service %s/%s has no ready endpoint on port %s (providers.kubernetesCRD.allowEmptyServices keeps it)", ns, s.Name, s.Port.String())
	}
	return ns, t.Addrs, err
}

// ingressRouteUDPs publishes one UDP router per route, named
// "<ns>-<name>-<index>", with its service of the same name.
func (b *builder) ingressRouteUDPs(objs []*IngressRouteUDP) {
	for _, o := range objs {
		src, ok := b.admitRoutes("IngressRouteUDP", o.Namespace, o.Name, o.Spec.IngressClassName, o.Annotations, len(o.Spec.Routes))
		if !ok {
			continue
		}
		name := objectName(o.Name, o.GenerateName)
		for i, r := range o.Spec.Routes {
			field := fmt.Sprintf("spec.routes[%d]", i)
			rn := makeID(o.Namespace, fmt.Sprintf("%s-%d", name, i))
			obj := []string{config.KindUDPRouter + " " + rn}
			svcs, f, err := b.routeUDP(o.Namespace, rn, r)
			if err != nil {
				b.errorf(src, obj, field+f, "%v", err)
				continue
			}
			u := b.conf.EnsureUDP()
			for n, s := range svcs {
				u.Services[n] = s
				b.origins[config.KindUDPService+" "+n] = src
			}
			u.Routers[rn] = &config.UDPRouter{EntryPoints: o.Spec.EntryPoints, Service: rn}
			b.origins[config.KindUDPRouter+" "+rn] = src
		}
	}
}

// routeUDP builds the services of UDP router rn.
func (b *builder) routeUDP(from, rn string, r RouteUDP) (map[string]*config.UDPService, string, error) {
	switch {
	case len(r.Services) == 0:
		return nil, ".services", errors.New("a UDP route needs a service")
	case len(r.Services) > maxRefsPerRoute:
		return nil, ".services", fmt.Errorf("more than %d services", maxRefsPerRoute)
	}
	out := map[string]*config.UDPService{}
	w := &config.UDPWeightedRoundRobin{}
	for i, s := range r.Services {
		field := fmt.Sprintf(".services[%d]", i)
		_, addrs, err := b.l4Addresses(from, s)
		if err != nil {
			return nil, field, err
		}
		lb := &config.UDPServersLoadBalancer{}
		for _, a := range addrs {
			lb.Servers = append(lb.Servers, config.UDPServer{Address: a})
		}
		if len(r.Services) == 1 {
			out[rn] = &config.UDPService{LoadBalancer: lb}
			return out, "", nil
		}
		child := fmt.Sprintf("%s-%s-%s", rn, s.Name, s.Port.String())
		out[child] = &config.UDPService{LoadBalancer: lb}
		w.Services = append(w.Services, config.WRRService{Name: child, Weight: weightOrOne(s.Weight)})
	}
	out[rn] = &config.UDPService{Weighted: w}
	return out, "", nil
}
