package crd

import (
	"errors"
	"fmt"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// Limits on what one object may declare (the API server bounds an object
// to about 1.5 MB; these keep one object from multiplying work).
const (
	maxRoutes        = 1000
	maxRefsPerRoute  = 100 // services or middlewares of one route
	maxParentRefs    = 100
	maxMatchLength   = 64 << 10
	maxChainElements = 100
)

// ingressRoutes publishes one router per route of each IngressRoute. all
// is every IngressRoute, for parentRefs.
func (b *builder) ingressRoutes(objs, all []*IngressRoute) {
	for _, o := range objs {
		src, ok := b.admitRoutes("IngressRoute", o.Namespace, o.Name, o.Spec.IngressClassName, o.Annotations, len(o.Spec.Routes))
		if !ok {
			continue
		}
		tls := o.Spec.TLS
		if tls != nil && tls.SecretName != "" {
			if err := b.addCertificate(o.Namespace, tls.SecretName, nil); err != nil {
				b.problem(providers.SeverityError, src, nil, "spec.tls.secretName", fmt.Errorf("%w (the routes are served with the certificates Gantry has for their hosts)", err))
			}
		}
		parents, err := b.parentRouters(o, all)
		if err != nil {
			b.errorf(src, nil, "spec.parentRefs", "%v: object ignored", err)
			continue
		}
		name := objectName(o.Name, o.GenerateName)
		for i, r := range o.Spec.Routes {
			field := fmt.Sprintf("spec.routes[%d]", i)
			rn := routerName(o.Namespace, name, r.Match)
			obj := []string{"router " + rn}
			rt, f, err := b.route(o, rn, r, parents)
			if err != nil {
				b.errorf(src, obj, field+f, "%v", err)
				continue
			}
			if _, dup := b.conf.HTTP.Routers[rn]; dup {
				b.errorf(src, obj, field+".match", "another route has the same match %q: this route is ignored", r.Match)
				continue
			}
			b.conf.HTTP.Routers[rn] = rt
			b.origins["router "+rn] = src
		}
	}
}

// admitRoutes reports whether the IngressRoute, IngressRouteTCP or
// IngressRouteUDP (kind) ns/name is translated: its ingress class
// (classMatches) is ours and it has at most maxRoutes routes (more is an
// error Problem naming spec.routes). src is the object's source, also made
// the builder's current one.
func (b *builder) admitRoutes(kind, ns, name string, class *string, annotations map[string]string, routes int) (src string, ok bool) {
	if !b.classMatches(class, annotations) {
		return "", false
	}
	src = source(kind, ns, name)
	b.at = src
	if routes > maxRoutes {
		b.errorf(src, nil, "spec.routes", "%d routes, over the limit of %d: object ignored", routes, maxRoutes)
		return src, false
	}
	return src, true
}

// checkRoute checks what HTTP and TCP routes share: a match of at most
// maxMatchLength bytes, at most maxRefsPerRoute services and middlewares.
// field (".match", or "" for the route) locates an error in the route.
func checkRoute(match string, services, middlewares int) (field string, err error) {
	switch {
	case match == "":
		return ".match", errors.New("empty match")
	case len(match) > maxMatchLength:
		return ".match", fmt.Errorf("%d bytes, over the limit of %d", len(match), maxMatchLength)
	case services > maxRefsPerRoute || middlewares > maxRefsPerRoute:
		return "", fmt.Errorf("more than %d services or middlewares", maxRefsPerRoute)
	}
	return "", nil
}

// route builds the router rn of route r; the returned field (".services[0]")
// locates an error inside the route.
func (b *builder) route(o *IngressRoute, rn string, r Route, parents []string) (*config.Router, string, error) {
	if r.Kind != "" && r.Kind != "Rule" {
		return nil, ".kind", fmt.Errorf("kind %q: only Rule is supported", r.Kind)
	}
	if f, err := checkRoute(r.Match, len(r.Services), len(r.Middlewares)); err != nil {
		return nil, f, err
	}
	rt := &config.Router{
		RouterCommon: config.RouterCommon{
			EntryPoints: o.Spec.EntryPoints,
			Rule:        r.Match,
			RuleSyntax:  r.Syntax,
			Priority:    r.Priority,
		},
		Observability: r.Observability,
		ParentRefs:    parents,
	}
	for i, m := range r.Middlewares {
		name, err := b.resolveRef("middleware", o.Namespace, m)
		if err != nil {
			return nil, fmt.Sprintf(".middlewares[%d]", i), err
		}
		rt.Middlewares = append(rt.Middlewares, name)
	}
	switch len(r.Services) {
	case 0:
		// A route without a service is a parent of other routes.
	case 1:
		name, lb, err := b.service(o.Namespace, r.Services[0])
		if err != nil {
			return nil, ".services[0]", err
		}
		if lb != nil {
			// A route's own Service is published under the router's name.
			name = rn
			b.publish(rn, lb)
		}
		rt.Service = name
	default:
		svc, err := b.weighted(o.Namespace, r.Services, nil)
		if err != nil {
			return nil, "", err
		}
		b.publish(rn, svc)
		rt.Service = rn
	}
	if t := o.Spec.TLS; t != nil {
		opts, err := b.tlsOptionsName(o.Namespace, t.Options)
		if err != nil {
			return nil, ".tls.options", err
		}
		rt.TLS = &config.RouterTLSConfig{Options: opts, CertResolver: t.CertResolver, Domains: t.Domains}
	}
	return rt, "", nil
}

// tlsOptionsName is the TLS options a route's tls.options names ("" for
// the default when unset).
func (b *builder) tlsOptionsName(ns string, ref *ObjectRef) (string, error) {
	if ref == nil || ref.Name == "" {
		return "", nil
	}
	return b.resolveRef("TLSOption", ns, *ref)
}

// parentRouters returns the routers of the IngressRoutes o names in
// spec.parentRefs (Traefik v3.6 multi-layer routing).
func (b *builder) parentRouters(o *IngressRoute, all []*IngressRoute) ([]string, error) {
	if len(o.Spec.ParentRefs) > maxParentRefs {
		return nil, fmt.Errorf("%d parentRefs, over the limit of %d", len(o.Spec.ParentRefs), maxParentRefs)
	}
	var out []string
	for i, ref := range o.Spec.ParentRefs {
		ns := ref.Namespace
		if ns == "" {
			ns = o.Namespace
		}
		if ns != o.Namespace && !b.opts.AllowCrossNamespace {
			return nil, fmt.Errorf("[%d]: %w", i, crossNamespaceError("parent IngressRoute", ns, ref.Name, o.Namespace))
		}
		var parent *IngressRoute
		for _, p := range all {
			if p.Namespace == ns && p.Name == ref.Name {
				parent = p
				break
			}
		}
		if parent == nil {
			return nil, fmt.Errorf("[%d]: parent IngressRoute %s/%s not found", i, ns, ref.Name)
		}
		for _, r := range parent.Spec.Routes {
			out = append(out, routerName(parent.Namespace, objectName(parent.Name, parent.GenerateName), r.Match))
		}
	}
	return out, nil
}
