package ingress

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

func ptr[T any](v T) *T { return &v }

type fixture struct {
	ings, classes, secrets, svcs, slices cache.Indexer
}

func newFixture() *fixture {
	n := func(ix cache.Indexers) cache.Indexer { return cache.NewIndexer(cache.MetaNamespaceKeyFunc, ix) }
	return &fixture{n(nil), n(nil), n(nil), n(nil), n(k8s.ServiceNameIndexers)}
}

func (f *fixture) cluster() cluster {
	return cluster{
		ingresses: k8s.ListerOf[*netv1.Ingress](f.ings),
		classes:   k8s.ListerOf[*netv1.IngressClass](f.classes),
		secrets:   k8s.ListerOf[*corev1.Secret](f.secrets),
		backends: k8s.Backends{Services: k8s.ListerOf[*corev1.Service](f.svcs),
			Slices: k8s.ListerOf[*discoveryv1.EndpointSlice](f.slices)},
	}
}

// svc adds Service ns/name with a port "http" 80 and ready endpoints ips
// on 8080.
func (f *fixture) svc(ns, name string, ann map[string]string, ips ...string) {
	_ = f.svcs.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann},
		Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.9", Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
	es := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-x",
		Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080))}}}
	for _, ip := range ips {
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}})
	}
	_ = f.slices.Add(es)
}

func ingress(ns, name string, ann map[string]string, class *string, rules ...netv1.IngressRule) *netv1.Ingress {
	return &netv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann},
		Spec: netv1.IngressSpec{IngressClassName: class, Rules: rules}}
}

func irule(host string, paths ...netv1.HTTPIngressPath) netv1.IngressRule {
	return netv1.IngressRule{Host: host, IngressRuleValue: netv1.IngressRuleValue{HTTP: &netv1.HTTPIngressRuleValue{Paths: paths}}}
}

func path(p string, pt netv1.PathType, svc string) netv1.HTTPIngressPath {
	var ptp *netv1.PathType
	if pt != "" {
		ptp = &pt
	}
	return netv1.HTTPIngressPath{Path: p, PathType: ptp, Backend: netv1.IngressBackend{Service: &netv1.IngressServiceBackend{Name: svc, Port: netv1.ServiceBackendPort{Number: 80}}}}
}

func TestBuildRoutersAndServices(t *testing.T) {
	f := newFixture()
	f.svc("app", "web", map[string]string{
		AnnotationPrefix + "service.sticky.cookie.name": "s",
		AnnotationPrefix + "service.passhostheader":     "false",
	}, "10.244.0.1", "10.244.0.2")
	_ = f.classes.Add(&netv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "traefik"}, Spec: netv1.IngressClassSpec{Controller: ControllerName}})
	_ = f.classes.Add(&netv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: netv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}})
	_ = f.ings.Add(ingress("app", "site", map[string]string{
		AnnotationPrefix + "router.entrypoints": "websecure",
		AnnotationPrefix + "router.middlewares": "app-auth@kubernetescrd",
		AnnotationPrefix + "router.tls":         "true",
		AnnotationPrefix + "router.priority":    "42",
	}, ptr("traefik"),
		irule("a.test", path("/api", netv1.PathTypePrefix, "web"), path("/exact", netv1.PathTypeExact, "web"), path("/is", "", "web")),
		irule("*.wild.test", path("/", netv1.PathTypePrefix, "web"))))
	_ = f.ings.Add(ingress("app", "other", nil, ptr("nginx"), irule("b.test", path("/", netv1.PathTypePrefix, "web"))))
	_ = f.ings.Add(ingress("app", "legacy", map[string]string{ClassAnnotation: "traefik"}, nil, irule("c.test", path("/", netv1.PathTypePrefix, "web"))))

	snap, served := build(settings{classLookup: true}, f.cluster())
	if len(snap.Problems) != 0 {
		t.Fatalf("problems: %v", snap.Problems)
	}
	if len(served) != 2 {
		t.Errorf("served %d Ingresses, want 2 (site, legacy)", len(served))
	}
	want := map[string]string{
		"app-site-a-test-api":   "Host(`a.test`) && PathPrefix(`/api`)",
		"app-site-a-test-exact": "Host(`a.test`) && Path(`/exact`)",
		"app-site-a-test-is":    "Host(`a.test`) && PathPrefix(`/is`)",
		"app-site-wild-test":    "Host(`*.wild.test`) && PathPrefix(`/`)",
		"app-legacy-c-test":     "Host(`c.test`) && PathPrefix(`/`)",
	}
	for name, r := range want {
		rt := snap.Config.HTTP.Routers[name]
		if rt == nil {
			t.Errorf("router %s missing; have %v", name, keys(snap.Config.HTTP.Routers))
			continue
		}
		if rt.Rule != r || rt.Service != "app-web-80" {
			t.Errorf("router %s: rule %q service %q", name, rt.Rule, rt.Service)
		}
	}
	rt := snap.Config.HTTP.Routers["app-site-a-test-api"]
	if rt.Priority != 42 || rt.TLS == nil || len(rt.EntryPoints) != 1 || rt.EntryPoints[0] != "websecure" || rt.Middlewares[0] != "app-auth@kubernetescrd" {
		t.Errorf("annotations not applied: %+v", rt)
	}
	if len(snap.Config.HTTP.Routers) != len(want) {
		t.Errorf("routers %v", keys(snap.Config.HTTP.Routers))
	}
	svc := snap.Config.HTTP.Services["app-web-80"]
	if svc == nil || len(svc.LoadBalancer.Servers) != 2 || svc.LoadBalancer.Servers[0].URL != "http://10.244.0.1:8080" ||
		svc.LoadBalancer.Sticky == nil || svc.LoadBalancer.Sticky.Cookie.Name != "s" || svc.LoadBalancer.PassHost() {
		t.Errorf("service: %+v", svc.LoadBalancer)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestBuildProblemsDisableOnlyTheirObject(t *testing.T) {
	f := newFixture()
	f.svc("app", "web", nil, "10.244.0.1")
	f.svc("app", "empty", nil)
	_ = f.ings.Add(ingress("app", "badann", map[string]string{AnnotationPrefix + "router.priority": "high"}, nil, irule("a.test", path("/", netv1.PathTypePrefix, "web"))))
	_ = f.ings.Add(ingress("app", "mixed", nil, nil, irule("b.test",
		path("/ok", netv1.PathTypePrefix, "web"), path("/missing", netv1.PathTypePrefix, "nope"), path("/empty", netv1.PathTypePrefix, "empty"))))
	tlsIng := ingress("app", "tls", nil, nil, irule("c.test", path("/", netv1.PathTypePrefix, "web")))
	tlsIng.Spec.TLS = []netv1.IngressTLS{{SecretName: "absent"}}
	_ = f.ings.Add(tlsIng)

	snap, _ := build(settings{}, f.cluster())
	r := snap.Config.HTTP.Routers
	if r["app-badann-a-test"] != nil || r["app-mixed-b-test-ok"] == nil || r["app-mixed-b-test-missing"] != nil || r["app-mixed-b-test-empty"] != nil || r["app-tls-c-test"] == nil {
		t.Errorf("routers %v", keys(r))
	}
	wantSrc := map[string]string{
		"Ingress app/badann metadata.annotations":                       "annotation traefik.ingress.kubernetes.io/router.priority",
		"Ingress app/mixed spec.rules[0].http.paths[1].backend.service": "service app/nope not found",
		"Ingress app/mixed spec.rules[0].http.paths[2].backend.service": "no ready endpoint",
		"Ingress app/tls spec.tls[0].secretName":                        "secret app/absent not found",
	}
	for _, p := range snap.Problems {
		if w, ok := wantSrc[p.Source]; ok && strings.Contains(p.Message, w) {
			delete(wantSrc, p.Source)
		}
	}
	if len(wantSrc) > 0 {
		t.Errorf("missing problems %v; got %v", wantSrc, snap.Problems)
	}
	for _, p := range snap.Problems {
		if strings.Contains(p.Message, "no ready endpoint") && p.Severity != providers.SeverityPending {
			t.Errorf("no endpoints is pending, got %s", p.Severity)
		}
	}

	snap, _ = build(settings{allowEmpty: true}, f.cluster())
	if s := snap.Config.HTTP.Services["app-empty-80"]; s == nil || len(s.LoadBalancer.Servers) != 0 || snap.Config.HTTP.Routers["app-mixed-b-test-empty"] == nil {
		t.Errorf("allowEmptyServices: service %+v", s)
	}
}

func TestPathRules(t *testing.T) {
	for _, c := range []struct {
		host, path string
		pt         netv1.PathType
		matcher    string
		strict     bool
		want       string
	}{
		{"", "/foo", netv1.PathTypePrefix, "", true, "(Path(`/foo`) || PathPrefix(`/foo/`))"},
		{"", "/foo/", netv1.PathTypePrefix, "", true, "(Path(`/foo`) || PathPrefix(`/foo/`))"},
		{"", "/", netv1.PathTypePrefix, "", true, "PathPrefix(`/`)"},
		{"", "/foo", netv1.PathTypeExact, "", true, "Path(`/foo`)"},
		{"", "/foo", netv1.PathTypeImplementationSpecific, "PathRegexp", false, "PathRegexp(`/foo`)"},
		{"", "/foo", netv1.PathTypePrefix, "PathRegexp", false, "PathPrefix(`/foo`)"},
		{"h.test", "", "", "", false, "Host(`h.test`)"},
		{"", "", "", "", false, "PathPrefix(`/`)"},
	} {
		p := netv1.HTTPIngressPath{Path: c.path}
		if c.pt != "" {
			p.PathType = &c.pt
		}
		got, err := pathRule(c.host, p, c.matcher, c.strict, false)
		if err != nil || got != c.want {
			t.Errorf("%+v: %q %v, want %q", c, got, err, c.want)
		}
	}
}

func TestSelectedDefaultClass(t *testing.T) {
	ours := &netv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "gantry", Annotations: map[string]string{isDefaultClass: "true"}}}
	plain := ingress("a", "b", nil, nil)
	if !selected(plain, nil, "") {
		t.Error("no class, no ingressClass option: served (Traefik)")
	}
	if selected(plain, nil, "gantry") {
		t.Error("no class with ingressClass set and no default class: not served")
	}
	if !selected(plain, []*netv1.IngressClass{ours}, "gantry") {
		t.Error("no class, our class is the default: served")
	}
	if selected(ingress("a", "b", map[string]string{ClassAnnotation: "nginx"}, nil), []*netv1.IngressClass{ours}, "") {
		t.Error("annotation of another class: not served")
	}
}
