package crd

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
	corev1 "k8s.io/api/core/v1"
)

// Options are the translation's settings, Traefik's
// providers.kubernetesCRD options of the same names.
// Source: https://doc.traefik.io/traefik/v3.7/reference/install-configuration/providers/kubernetes/kubernetes-crd/
type Options struct {
	// AllowCrossNamespace lets an object reference Services, Middlewares,
	// TraefikServices, TLSOptions and ServersTransports of other namespaces.
	AllowCrossNamespace bool
	// AllowExternalNameServices lets routes use ExternalName Services.
	AllowExternalNameServices bool
	// AllowEmptyServices keeps a Service without ready endpoints as a load
	// balancer without servers (503) instead of leaving the route out.
	AllowEmptyServices bool
	// NativeLBByDefault uses each Service's ClusterIP as the only server
	// unless a service reference says nativeLB: false.
	NativeLBByDefault bool
	// IngressClass selects the objects whose spec.ingressClassName (or
	// kubernetes.io/ingress.class annotation) equals it; empty selects the
	// objects with no class or class "traefik".
	IngressClass string
	// CrossProviderNamespaces, when not nil, lists the namespaces whose
	// objects may reference other providers' objects ("x@file").
	CrossProviderNamespaces []string
}

// Input is every decoded custom resource the provider sees. The
// translation sorts nothing in place; order does not matter.
type Input struct {
	IngressRoutes        []*IngressRoute
	IngressRouteTCPs     []*IngressRouteTCP
	IngressRouteUDPs     []*IngressRouteUDP
	Middlewares          []*Middleware
	MiddlewareTCPs       []*MiddlewareTCP
	TraefikServices      []*TraefikService
	TLSOptions           []*TLSOption
	TLSStores            []*TLSStore
	ServersTransports    []*ServersTransport
	ServersTransportTCPs []*ServersTransportTCP
}

// Cluster is what the translation reads besides the custom resources,
// from the shared informers: Service ports resolved to addresses (as
// k8s.Backends.Resolve, with allowExternalNameServices applied), Secrets
// and ConfigMaps (a missing ConfigMap is (nil, false)).
type Cluster interface {
	Resolve(namespace, name string, port k8s.PortRef, nativeLB bool) (k8s.Target, error)
	Secrets() k8s.Lister[*corev1.Secret]
	ConfigMap(namespace, name string) (*corev1.ConfigMap, bool)
}

// builder accumulates one translation.
type builder struct {
	opts     Options
	cl       Cluster
	conf     *config.Configuration
	problems []providers.Problem
	origins  map[string]string
	// certs are the TLS certificates by "<namespace>/<secret>" (each
	// Secret once, whoever references it).
	certs map[string]*config.CertAndStores
	// at is the source of the object being translated.
	at string
}

// Translate builds the provider's snapshot from in. Objects are visited in
// namespace/name order, so the result and its problems are deterministic.
// An object (or route) that cannot be translated is left out with an error
// Problem naming "<Kind> <namespace>/<name>" and the field; the rest is
// translated. Objects whose ingress class does not match are ignored.
func Translate(in *Input, cl Cluster, opts Options) providers.Snapshot {
	b := &builder{
		opts:    opts,
		cl:      cl,
		conf:    config.New(),
		origins: map[string]string{},
		certs:   map[string]*config.CertAndStores{},
	}
	b.tlsStores(sorted(in.TLSStores))
	b.tlsOptions(sorted(in.TLSOptions))
	b.serversTransports(sorted(in.ServersTransports))
	b.serversTransportTCPs(sorted(in.ServersTransportTCPs))
	b.middlewares(sorted(in.Middlewares))
	b.middlewareTCPs(sorted(in.MiddlewareTCPs))
	b.traefikServices(sorted(in.TraefikServices))
	routes := sorted(in.IngressRoutes)
	b.ingressRoutes(routes, routes)
	b.ingressRouteTCPs(sorted(in.IngressRouteTCPs))
	b.ingressRouteUDPs(sorted(in.IngressRouteUDPs))
	for _, k := range slices.Sorted(maps.Keys(b.certs)) {
		b.conf.TLS.Certificates = append(b.conf.TLS.Certificates, b.certs[k])
	}
	b.validate()
	return providers.Snapshot{Config: b.conf, Problems: b.problems, Origins: b.origins}
}

// sorted returns objs ordered by namespace, then name.
func sorted[S any](objs []*Object[S]) []*Object[S] {
	out := slices.Clone(objs)
	slices.SortFunc(out, func(a, b *Object[S]) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// publishEach publishes each of objs, objects of kind (Middleware,
// TraefikService, ServersTransport), as "<ns>-<name>" (normalized: id) in
// into, located in b.origins under "<objKey> <id>" and, while translate
// runs, in b.at. translate builds one object; when it fails, field locates
// the error inside the object ("spec.tls.rootCAs[0]") and the object is
// left out with an error Problem naming "<objKey> <id>".
func publishEach[S, V any](b *builder, kind, objKey string, objs []*Object[S], into map[string]V, translate func(o *Object[S], id string) (V, string, error)) {
	for _, o := range objs {
		src := source(kind, o.Namespace, o.Name)
		b.at = src
		id := providers.Normalize(makeID(o.Namespace, o.Name))
		v, field, err := translate(o, id)
		if err != nil {
			b.problem(providers.SeverityError, src, []string{objKey + " " + id}, field, err)
			continue
		}
		into[id] = v
		b.origins[objKey+" "+id] = src
	}
}

// source is how problems and origins name an object: "IngressRoute ns/name".
func source(kind, namespace, name string) string {
	return kind + " " + namespace + "/" + name
}

// problem records an error Problem for the object at src; objects are the
// configuration objects ("router x") it left out, field the path inside
// the object ("spec.routes[0].services[1]").
func (b *builder) problem(sev providers.Severity, src string, objects []string, field string, err error) {
	msg := err.Error()
	if field != "" {
		msg = field + ": " + msg
	}
	b.problems = append(b.problems, providers.Problem{
		Provider: ProviderName, Source: src, Objects: objects, Message: msg, Severity: sev,
	})
}

func (b *builder) errorf(src string, objects []string, field, format string, args ...any) {
	b.problem(providers.SeverityError, src, objects, field, fmt.Errorf(format, args...))
}

// classMatches reports whether an object with spec.ingressClassName class
// (nil: unset) and annotations belongs to this provider (Traefik's
// shouldProcessIngress: equal to the option, or unset/"traefik" when the
// option is empty). The kubernetes.io/ingress.class annotation is read
// when the field is unset.
func (b *builder) classMatches(class *string, annotations map[string]string) bool {
	c := ""
	if class != nil {
		c = *class
	} else if a := annotations["kubernetes.io/ingress.class"]; a != "" {
		c = a
	}
	return c == b.opts.IngressClass || (b.opts.IngressClass == "" && c == "traefik")
}

// validate reports what config.Validate finds in the result, each problem
// located at the object the configuration object came from. The objects
// stay: router.Compile shows them disabled with the same error.
func (b *builder) validate() {
	for _, e := range config.Validate(b.conf) {
		key := e.Kind + " " + e.Name
		src := b.origins[key]
		if src == "" {
			src = key
		}
		b.problems = append(b.problems, providers.Problem{
			Provider: ProviderName, Source: src, Objects: []string{key},
			Message: e.Error(), Severity: providers.SeverityError,
		})
	}
}
