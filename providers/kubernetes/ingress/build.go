package ingress

import (
	"crypto/sha256"
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

// Ingress class selection (Traefik v3.7).
const (
	// ControllerName is the spec.controller of the IngressClasses served.
	ControllerName = "traefik.io/ingress-controller"
	// ClassAnnotation is the legacy class annotation.
	ClassAnnotation = "kubernetes.io/ingress.class"
	// defaultClassAnnotationValue is the annotation value served when
	// ingressClass is not configured.
	defaultClassAnnotationValue = "traefik"
	// isDefaultClass marks the cluster's default IngressClass.
	isDefaultClass = "ingressclass.kubernetes.io/is-default-class"
)

// Names of the default backend's objects (one per provider, as Traefik).
const (
	defaultRouter  = "default-router"
	defaultBackend = "default-backend"
)

// settings are the options build reads.
type settings struct {
	ingressClass            string
	classLookup             bool
	allowEmpty              bool
	nativeLBByDefault       bool
	strictPrefix            bool
	crossProviderNamespaces []string // nil: all allowed
}

// cluster is what build reads: the informer caches.
type cluster struct {
	ingresses Lister[*netv1.Ingress]
	classes   Lister[*netv1.IngressClass]
	secrets   Lister[*corev1.Secret]
	backends  k8s.Backends
}

// Lister is k8s.Lister (shortened for this package).
type Lister[T any] = k8s.Lister[T]

// builder accumulates one snapshot.
type builder struct {
	s        settings
	c        cluster
	conf     *config.Configuration
	problems []providers.Problem
	certs    map[string]config.Certificate // "ns/secret" -> certificate
	served   []*netv1.Ingress              // Ingresses of our class, for status
}

// build reads the caches and returns the complete snapshot, and the
// Ingresses served (for their status).
func build(s settings, c cluster) (providers.Snapshot, []*netv1.Ingress) {
	b := &builder{s: s, c: c, conf: config.New(), certs: map[string]config.Certificate{}}
	classes := b.ourClasses()
	ings := c.ingresses.List()
	slices.SortFunc(ings, func(a, b *netv1.Ingress) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, ing := range ings {
		if !selected(ing, classes, s.ingressClass) {
			continue
		}
		b.served = append(b.served, ing)
		b.ingress(ing)
	}
	for _, k := range slices.Sorted(mapsKeys(b.certs)) {
		b.conf.TLS.Certificates = append(b.conf.TLS.Certificates, &config.CertAndStores{Certificate: b.certs[k]})
	}
	return providers.Snapshot{Config: b.conf, Problems: b.problems}, b.served
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// ourClasses returns the IngressClasses of ControllerName (only the one
// named ingressClass when set); nil without class lookup.
func (b *builder) ourClasses() []*netv1.IngressClass {
	if !b.s.classLookup {
		return nil
	}
	var out []*netv1.IngressClass
	for _, ic := range b.c.classes.List() {
		if ic.Spec.Controller == ControllerName && (b.s.ingressClass == "" || ic.Name == b.s.ingressClass) {
			out = append(out, ic)
		}
	}
	return out
}

// selected says whether the provider serves ing (Traefik's
// shouldProcessIngress, plus the default IngressClass): spec.ingressClassName
// naming one of classes; else the legacy annotation equal to ingressClass
// (or "traefik" when ingressClass is unset); else, with no class and no
// annotation, when ingressClass is unset or one of classes is the
// cluster's default.
func selected(ing *netv1.Ingress, classes []*netv1.IngressClass, ingressClass string) bool {
	if n := ing.Spec.IngressClassName; n != nil && *n != "" {
		return slices.ContainsFunc(classes, func(ic *netv1.IngressClass) bool { return ic.Name == *n })
	}
	ann, has := ing.Annotations[ClassAnnotation]
	if has && ann != "" {
		return ann == ingressClass || ingressClass == "" && ann == defaultClassAnnotationValue
	}
	if ingressClass == "" {
		return true
	}
	return slices.ContainsFunc(classes, func(ic *netv1.IngressClass) bool { return ic.Annotations[isDefaultClass] == "true" })
}

// problem records a problem of ing at field.
func (b *builder) problem(ing *netv1.Ingress, sev providers.Severity, field, msg string, objects ...string) {
	b.problems = append(b.problems, k8s.ObjectProblem(ProviderName, sev, "Ingress", ing.Namespace, ing.Name, field, msg, objects...))
}

// ingress adds the routers and services of one Ingress of our class.
func (b *builder) ingress(ing *netv1.Ingress) {
	ra, err := parseRouter(ing.Annotations)
	if err != nil {
		b.problem(ing, providers.SeverityError, "metadata.annotations", err.Error()+"; the Ingress is left out")
		return
	}
	if b.s.crossProviderNamespaces != nil && !slices.Contains(b.s.crossProviderNamespaces, ing.Namespace) && ra.router != nil {
		if len(ra.router.Middlewares) > 0 || ra.router.TLS != nil && ra.router.TLS.Options != "" {
			b.problem(ing, providers.SeverityError, "metadata.annotations",
				fmt.Sprintf("references to middlewares or TLS options are not allowed from namespace %s (crossProviderNamespaces); the Ingress is left out", ing.Namespace))
			return
		}
	}
	for i, t := range ing.Spec.TLS {
		if t.SecretName == "" {
			continue
		}
		key := ing.Namespace + "/" + t.SecretName
		if _, ok := b.certs[key]; ok {
			continue
		}
		c, err := k8s.TLSSecret(b.c.secrets, ing.Namespace, t.SecretName)
		if err != nil {
			b.problem(ing, providers.SeverityError, fmt.Sprintf("spec.tls[%d].secretName", i), err.Error()+"; the certificate is left out")
			continue
		}
		b.certs[key] = c
	}
	if len(ing.Spec.Rules) == 0 && ing.Spec.DefaultBackend != nil {
		b.defaultBackend(ing, ra)
	}
	routers := map[string][]*config.Router{}
	var order []string
	for i, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for j, p := range rule.HTTP.Paths {
			field := fmt.Sprintf("spec.rules[%d].http.paths[%d]", i, j)
			svcName, ok := b.service(ing, p.Backend, field+".backend")
			if !ok {
				continue
			}
			rt, err := b.router(rule.Host, p, ra, svcName)
			if err != nil {
				b.problem(ing, providers.SeverityError, field, err.Error()+"; the path is left out")
				continue
			}
			key := strings.TrimPrefix(providers.Normalize(ing.Namespace+"-"+ing.Name+"-"+rule.Host+p.Path), "-")
			if _, ok := routers[key]; !ok {
				order = append(order, key)
			}
			routers[key] = append(routers[key], rt)
		}
	}
	for _, key := range order {
		rts := routers[key]
		if len(rts) == 1 {
			b.conf.HTTP.Routers[key] = rts[0]
			continue
		}
		// Several paths normalize alike ("/a-b" and "/a/b"): as Traefik,
		// suffix each with the first 10 bytes of its rule's SHA-256 in hex.
		for _, rt := range rts {
			sum := sha256.Sum256([]byte(rt.Rule))
			b.conf.HTTP.Routers[fmt.Sprintf("%s-%.10x", key, sum[:])] = rt
		}
	}
}

// defaultBackend adds the catch-all router of an Ingress without rules
// (lowest priority), once per provider.
func (b *builder) defaultBackend(ing *netv1.Ingress, ra routerAnn) {
	const field = "spec.defaultBackend"
	if _, ok := b.conf.HTTP.Services[defaultBackend]; ok {
		b.problem(ing, providers.SeverityError, field, "another Ingress of this class already defines the default backend; this one is left out", "router "+defaultRouter)
		return
	}
	name, ok := b.serviceAs(ing, *ing.Spec.DefaultBackend, field, defaultBackend)
	if !ok {
		return
	}
	rt := &config.Router{RouterCommon: config.RouterCommon{Rule: "PathPrefix(`/`)", Priority: math.MinInt32, Service: name}}
	if r := ra.router; r != nil {
		rt.EntryPoints, rt.Middlewares, rt.TLS, rt.Observability = r.EntryPoints, r.Middlewares, r.TLS, r.Observability
	}
	b.conf.HTTP.Routers[defaultRouter] = rt
}

// service adds the service of a path's backend, named
// "<ns>-<service>-<port>" (shared by every path and Ingress using it),
// and returns its name; false (with a problem) when it cannot be used.
func (b *builder) service(ing *netv1.Ingress, be netv1.IngressBackend, field string) (string, bool) {
	if be.Service == nil {
		if be.Resource != nil {
			b.problem(ing, providers.SeverityError, field+".resource", "resource backends are not supported; the path is left out")
		} else {
			b.problem(ing, providers.SeverityError, field+".service", "missing; the path is left out")
		}
		return "", false
	}
	name := providers.Normalize(ing.Namespace + "-" + be.Service.Name + "-" + portString(be.Service.Port))
	if _, ok := b.conf.HTTP.Services[name]; ok {
		return name, true
	}
	return b.serviceAs(ing, be, field, name)
}

// serviceAs builds the service of backend be under name.
func (b *builder) serviceAs(ing *netv1.Ingress, be netv1.IngressBackend, field, name string) (string, bool) {
	if be.Service == nil {
		b.problem(ing, providers.SeverityError, field+".service", "missing (resource backends are not supported); left out")
		return "", false
	}
	sref := be.Service
	var ann serviceAnn
	if svc, ok := b.c.backends.Services.Get(ing.Namespace, sref.Name); ok {
		var err error
		if ann, err = parseService(svc.Annotations); err != nil {
			b.problems = append(b.problems, k8s.ObjectProblem(ProviderName, providers.SeverityError, "Service", svc.Namespace, svc.Name, "metadata.annotations",
				err.Error()+fmt.Sprintf("; Ingress %s/%s %s is left out", ing.Namespace, ing.Name, field), "service "+name))
			return "", false
		}
		if ann.lb.ServersTransport != "" && b.s.crossProviderNamespaces != nil && !slices.Contains(b.s.crossProviderNamespaces, svc.Namespace) {
			b.problems = append(b.problems, k8s.ObjectProblem(ProviderName, providers.SeverityError, "Service", svc.Namespace, svc.Name, "metadata.annotations",
				fmt.Sprintf("serversTransport references are not allowed from namespace %s (crossProviderNamespaces)", svc.Namespace), "service "+name))
			return "", false
		}
	}
	nativeLB := b.s.nativeLBByDefault
	if ann.nativeLB != nil {
		nativeLB = *ann.nativeLB
	}
	t, err := b.c.backends.Resolve(ing.Namespace, sref.Name, k8s.PortRef{Name: sref.Port.Name, Number: sref.Port.Number}, nativeLB)
	if err != nil {
		b.problem(ing, providers.SeverityError, field+".service", err.Error()+"; left out", "service "+name)
		return "", false
	}
	if t.Empty() && !b.s.allowEmpty {
		b.problem(ing, providers.SeverityPending, field+".service",
			fmt.Sprintf("service %s/%s port %s has no ready endpoint; not routed until one is (allowEmptyServices is false)", ing.Namespace, sref.Name, portString(sref.Port)),
			"service "+name)
		return "", false
	}
	lb := ann.lb
	lb.Servers = t.Servers(ann.scheme)
	b.conf.HTTP.Services[name] = &config.Service{LoadBalancer: &lb, Middlewares: ann.middlewares}
	return name, true
}

// router builds the router of one path.
func (b *builder) router(host string, p netv1.HTTPIngressPath, ra routerAnn, service string) (*config.Router, error) {
	rt := &config.Router{RouterCommon: config.RouterCommon{Service: service}}
	if r := ra.router; r != nil {
		rt.EntryPoints, rt.Middlewares, rt.Priority, rt.RuleSyntax = r.EntryPoints, r.Middlewares, r.Priority, r.RuleSyntax
		rt.TLS, rt.Observability = r.TLS, r.Observability
	}
	rule, err := pathRule(host, p, ra.pathMatcher, b.s.strictPrefix, rt.RuleSyntax == "v2")
	if err != nil {
		return nil, err
	}
	rt.Rule = rule
	return rt, nil
}

// portString is a backend port's number, or its name.
func portString(p netv1.ServiceBackendPort) string {
	return k8s.PortRef{Name: p.Name, Number: p.Number}.String()
}
