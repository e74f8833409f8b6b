package ingressnginx

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// Defaults of Options, as ingress-nginx and Traefik's provider have them.
const (
	DefaultIngressClass    = "nginx"
	DefaultControllerClass = "k8s.io/ingress-nginx"
	// AnnotationIngressClass is the legacy class annotation.
	AnnotationIngressClass = "kubernetes.io/ingress.class"
	// ProviderName is the provider's default name (Traefik's).
	ProviderName = "kubernetesingressnginx"
	// unavailable is the service with no server: 503, as ingress-nginx
	// answers for a location it cannot serve.
	unavailable = "unavailable"
)

// Options select and shape what Translate builds; the zero value takes
// the defaults (option names are Traefik v3.7's providers.kubernetesIngressNGINX).
type Options struct {
	// Provider names the provider in problems (default ProviderName).
	Provider string
	// IngressClass is the class name served (default "nginx"), matched
	// against the kubernetes.io/ingress.class annotation, and against
	// spec.ingressClassName when IngressClassByName is set.
	IngressClass string
	// ControllerClass is the IngressClass spec.controller served
	// (default "k8s.io/ingress-nginx").
	ControllerClass          string
	IngressClassByName       bool
	WatchIngressWithoutClass bool
	// HTTPEntryPoint and HTTPSEntryPoint are where each Ingress path is
	// served in plain HTTP and in TLS (default "web" and "websecure").
	HTTPEntryPoint, HTTPSEntryPoint string
	// AllowCrossNamespaceResources lets auth-secret and custom-headers
	// name another namespace's Secret or ConfigMap.
	AllowCrossNamespaceResources bool
	// GlobalAllowedResponseHeaders are the header names custom-headers
	// may set (ingress-nginx's global-allowed-response-headers).
	GlobalAllowedResponseHeaders []string
}

func (o Options) withDefaults() Options {
	if o.Provider == "" {
		o.Provider = ProviderName
	}
	if o.IngressClass == "" {
		o.IngressClass = DefaultIngressClass
	}
	if o.ControllerClass == "" {
		o.ControllerClass = DefaultControllerClass
	}
	if o.HTTPEntryPoint == "" {
		o.HTTPEntryPoint = "web"
	}
	if o.HTTPSEntryPoint == "" {
		o.HTTPSEntryPoint = "websecure"
	}
	return o
}

// Cluster is what Translate reads besides Ingresses.
type Cluster interface {
	// Endpoints returns the ready "ip:port" addresses behind port of the
	// Service namespace/name, and the fenced ones (terminating endpoints
	// that still serve: sticky sessions only), or an error when the
	// Service or port is missing.
	Endpoints(namespace, name string, port netv1.ServiceBackendPort) (ready, fenced []string, err error)
	Secret(namespace, name string) (*corev1.Secret, error)
	ConfigMap(namespace, name string) (*corev1.ConfigMap, error)
}

// Result is one translation: the configuration, the problems, and the
// migration report of every Ingress of the class.
type Result struct {
	Config   *config.Configuration
	Problems []providers.Problem
	Report   Report
}

// Selected reports whether ing belongs to the class o serves, as
// ingress-nginx selects: spec.ingressClassName naming an IngressClass whose
// controller is o.ControllerClass (or, with IngressClassByName, named
// o.IngressClass); else the kubernetes.io/ingress.class annotation equal to
// o.IngressClass; else WatchIngressWithoutClass.
func Selected(ing *netv1.Ingress, classes []*netv1.IngressClass, o Options) bool {
	o = o.withDefaults()
	if n := ing.Spec.IngressClassName; n != nil {
		if o.IngressClassByName && *n == o.IngressClass {
			return true
		}
		for _, c := range classes {
			if c.Name == *n {
				return c.Spec.Controller == o.ControllerClass
			}
		}
		return false
	}
	if c, ok := ing.Annotations[AnnotationIngressClass]; ok {
		return c == o.IngressClass
	}
	return o.WatchIngressWithoutClass
}

// Translate builds the configuration of the Ingresses of the class o
// serves. It never fails: what it cannot serve is a Problem naming the
// Ingress (namespace/name) and the annotation, and the report says, per
// Ingress and annotation, whether it is served exactly, approximated or
// refused.
func Translate(ingresses []*netv1.Ingress, classes []*netv1.IngressClass, cl Cluster, o Options) Result {
	o = o.withDefaults()
	t := &translator{o: o, cl: cl, conf: config.New(), seenPaths: map[string]string{}, certs: map[string]bool{}}
	t.conf.HTTP.Services[unavailable] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{}}

	var sel []*netv1.Ingress
	for _, ing := range ingresses {
		if Selected(ing, classes, o) {
			sel = append(sel, ing)
		}
	}
	// ingress-nginx's order: oldest first, then by namespace/name (the
	// first Ingress to claim a host and path keeps it).
	slices.SortStableFunc(sel, func(a, b *netv1.Ingress) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(key(a), key(b))
	})
	for _, ing := range sel {
		t.add(ing)
	}
	t.hostsInfo()
	t.pairCanaries()
	for _, in := range t.ingresses {
		if !in.s.canary {
			t.build(in)
		}
	}
	for _, in := range t.ingresses {
		t.report(in)
	}
	t.res.Config = t.conf
	t.res.Report.total()
	return t.res
}

func key(ing *netv1.Ingress) string { return ing.Namespace + "/" + ing.Name }

type translator struct {
	o         Options
	cl        Cluster
	conf      *config.Configuration
	res       Result
	ingresses []*ingress
	// regexHosts are the hosts with use-regex or rewrite-target on some
	// Ingress; tlsHosts those some Ingress has a TLS section for.
	regexHosts, tlsHosts, ruleHosts map[string]bool
	// exactPaths are host+"\x00"+path of the Exact paths.
	exactPaths map[string]bool
	// canaries maps a main path to its canary.
	canaries map[string]*canaryRef
	// seenPaths maps host+path+type to the Ingress that claimed it.
	seenPaths map[string]string
	certs     map[string]bool
	aliases   map[string]string
}

type ingress struct {
	ing      *netv1.Ingress
	s        *settings
	problems []string
}

type canaryRef struct {
	ing     *ingress
	backend netv1.IngressServiceBackend
}

func (t *translator) add(ing *netv1.Ingress) {
	t.ingresses = append(t.ingresses, &ingress{ing: ing, s: parseSettings(ing)})
}

// problem records a problem about ing.
func (t *translator) problem(in *ingress, sev providers.Severity, objects []string, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	t.res.Problems = append(t.res.Problems, providers.Problem{
		Provider: t.o.Provider,
		Source:   "ingress " + key(in.ing),
		Objects:  objects,
		Message:  msg,
		Severity: sev,
	})
	in.problems = append(in.problems, msg)
}

// hostsInfo collects the per-host facts ingress-nginx derives from every
// Ingress of a host: regex paths, TLS, and which Ingress owns an alias.
func (t *translator) hostsInfo() {
	t.regexHosts, t.tlsHosts, t.ruleHosts, t.exactPaths, t.aliases = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]string{}
	for _, in := range t.ingresses {
		var hosts []string
		for _, r := range in.ing.Spec.Rules {
			h := strings.ToLower(strings.TrimSuffix(r.Host, "."))
			if r.HTTP != nil && !in.s.canary {
				for _, p := range r.HTTP.Paths {
					if p.PathType != nil && *p.PathType == netv1.PathTypeExact {
						t.exactPaths[h+"\x00"+p.Path] = true
					}
				}
			}
			hosts = append(hosts, h)
			t.ruleHosts[h] = true
			if !in.s.canary && (in.s.useRegex || in.s.rewriteTarget != "") {
				t.regexHosts[h] = true
			}
		}
		for _, tl := range in.ing.Spec.TLS {
			if len(tl.Hosts) == 0 {
				for _, h := range hosts {
					t.tlsHosts[h] = true
				}
			}
			for _, h := range tl.Hosts {
				t.tlsHosts[strings.ToLower(h)] = true
			}
		}
	}
	for _, in := range t.ingresses {
		if in.s.canary {
			continue
		}
		for _, a := range in.s.aliases {
			if _, ok := t.aliases[a]; !ok {
				t.aliases[a] = key(in.ing)
			}
		}
	}
}

// pathKey identifies a host and path the way ingress-nginx pairs a canary
// with its main Ingress: same namespace, host, path and path type.
func pathKey(ns, host string, p netv1.HTTPIngressPath) string {
	pt := netv1.PathTypePrefix
	if p.PathType != nil {
		pt = *p.PathType
	}
	return ns + "\x00" + strings.ToLower(host) + "\x00" + p.Path + "\x00" + string(pt)
}

func (t *translator) pairCanaries() {
	t.canaries = map[string]*canaryRef{}
	main := map[string]bool{}
	for _, in := range t.ingresses {
		if in.s.canary {
			continue
		}
		for _, r := range in.ing.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			for _, p := range r.HTTP.Paths {
				main[pathKey(in.ing.Namespace, r.Host, p)] = true
			}
		}
	}
	for _, in := range t.ingresses {
		if !in.s.canary {
			continue
		}
		for _, r := range in.ing.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			for _, p := range r.HTTP.Paths {
				k := pathKey(in.ing.Namespace, r.Host, p)
				switch {
				case p.Backend.Service == nil:
				case !main[k]:
					t.problem(in, providers.SeverityWarning, nil, "canary path %s%s matches no path of a main Ingress in namespace %s: ignored", r.Host, p.Path, in.ing.Namespace)
				case in.s.denied != "":
					t.problem(in, providers.SeverityError, nil, "canary path %s%s not used: %s", r.Host, p.Path, in.s.denied)
				case t.canaries[k] != nil:
					t.problem(in, providers.SeverityWarning, nil, "canary path %s%s: %s is already its canary (one canary per path): ignored", r.Host, p.Path, key(t.canaries[k].ing.ing))
				default:
					t.canaries[k] = &canaryRef{ing: in, backend: *p.Backend.Service}
				}
			}
		}
	}
}

// report adds the Ingress's verdicts to the report.
func (t *translator) report(in *ingress) {
	r := IngressReport{Namespace: in.ing.Namespace, Name: in.ing.Name, Canary: in.s.canary, Problems: in.problems, Status: "served"}
	if in.s.denied != "" {
		r.Status = "denied"
	}
	for _, n := range slices.Sorted(maps.Keys(in.s.verdicts)) {
		r.Annotations = append(r.Annotations, *in.s.verdicts[n])
	}
	t.res.Report.Ingresses = append(t.res.Report.Ingresses, r)
	// Refused annotations are problems too (critical ones are errors).
	for _, v := range r.Annotations {
		if v.Support != Refused {
			continue
		}
		sev := providers.SeverityWarning
		if v.Critical {
			sev = providers.SeverityError
		}
		t.res.Problems = append(t.res.Problems, providers.Problem{
			Provider: t.o.Provider,
			Source:   fmt.Sprintf("ingress %s annotation %s%s", key(in.ing), Prefix, v.Annotation),
			Message:  refusedMessage(v),
			Severity: sev,
		})
	}
}

func refusedMessage(v Verdict) string {
	msg := "refused"
	if v.Detail != "" {
		msg += ": " + v.Detail
	}
	if v.Critical {
		msg += "; the Ingress's paths answer 503"
	} else {
		msg += "; served without it"
	}
	return msg
}
