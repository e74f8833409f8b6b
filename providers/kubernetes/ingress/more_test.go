package ingress

import (
	"math"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

func TestDefaultBackendOncePerProvider(t *testing.T) {
	f := newFixture()
	f.svc("app", "web", nil, "10.244.0.1")
	for _, name := range []string{"a", "b"} {
		ing := ingress("app", name, nil, nil)
		ing.Spec.DefaultBackend = &netv1.IngressBackend{Service: &netv1.IngressServiceBackend{Name: "web", Port: netv1.ServiceBackendPort{Name: "http"}}}
		_ = f.ings.Add(ing)
	}
	snap, _ := build(settings{}, f.cluster())
	rt := snap.Config.HTTP.Routers[defaultRouter]
	if rt == nil || rt.Priority != math.MinInt32 || rt.Service != defaultBackend || rt.Rule != "PathPrefix(`/`)" {
		t.Fatalf("default router %+v", rt)
	}
	if len(snap.Problems) != 1 || snap.Problems[0].Source != "Ingress app/b spec.defaultBackend" {
		t.Errorf("problems %v", snap.Problems)
	}
}

func TestCrossProviderNamespaces(t *testing.T) {
	f := newFixture()
	f.svc("app", "web", nil, "10.244.0.1")
	f.svc("trusted", "web", nil, "10.244.0.2")
	mw := map[string]string{AnnotationPrefix + "router.middlewares": "x-auth@kubernetescrd"}
	_ = f.ings.Add(ingress("app", "mw", mw, nil, irule("a.test", path("/", netv1.PathTypePrefix, "web"))))
	_ = f.ings.Add(ingress("trusted", "mw", mw, nil, irule("b.test", path("/", netv1.PathTypePrefix, "web"))))
	snap, _ := build(settings{crossProviderNamespaces: []string{"trusted"}}, f.cluster())
	if snap.Config.HTTP.Routers["app-mw-a-test"] != nil || snap.Config.HTTP.Routers["trusted-mw-b-test"] == nil {
		t.Errorf("routers %v", keys(snap.Config.HTTP.Routers))
	}
	if len(snap.Problems) != 1 || !strings.Contains(snap.Problems[0].Message, "crossProviderNamespaces") {
		t.Errorf("problems %v", snap.Problems)
	}
}

func TestRouterKeyConflictGetsRuleHash(t *testing.T) {
	f := newFixture()
	f.svc("app", "web", nil, "10.244.0.1")
	_ = f.ings.Add(ingress("app", "x", nil, nil, irule("a.test", path("/a-b", netv1.PathTypePrefix, "web"), path("/a/b", netv1.PathTypePrefix, "web"))))
	snap, _ := build(settings{}, f.cluster())
	if len(snap.Config.HTTP.Routers) != 2 {
		t.Fatalf("routers %v", keys(snap.Config.HTTP.Routers))
	}
	for k := range snap.Config.HTTP.Routers {
		if !strings.HasPrefix(k, "app-x-a-test-a-b-") || len(k) != len("app-x-a-test-a-b-")+20 { // Traefik: %.10x of the digest bytes, 20 hex digits
			t.Errorf("router key %q", k)
		}
	}
}

func TestDesiredStatus(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = idx.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "gantry", Name: "lb"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.5"}}}}})
	_ = idx.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "gantry", Name: "pending"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}})
	_ = idx.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "gantry", Name: "np"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}})
	svcs := k8s.ListerOf[*corev1.Service](idx)
	lbs, ok, prob := desiredStatus(&static.KubernetesIngressEndpoint{PublishedService: "gantry/lb"}, svcs)
	if !ok || prob != nil || len(lbs) != 1 || lbs[0].IP != "203.0.113.5" {
		t.Errorf("LoadBalancer: %v %v %v", lbs, ok, prob)
	}
	if _, ok, prob := desiredStatus(&static.KubernetesIngressEndpoint{PublishedService: "gantry/pending"}, svcs); ok || prob != nil {
		t.Errorf("LoadBalancer without address: ok %v problem %v", ok, prob)
	}
	if _, ok, prob := desiredStatus(&static.KubernetesIngressEndpoint{PublishedService: "gantry/np"}, svcs); ok || prob == nil || !strings.Contains(prob.Message, "NodePort") {
		t.Errorf("NodePort: ok %v problem %v", ok, prob)
	}
	if _, ok, prob := desiredStatus(&static.KubernetesIngressEndpoint{PublishedService: "gantry/none"}, svcs); ok || prob == nil || !strings.Contains(prob.Message, "not found") {
		t.Errorf("missing: ok %v problem %v", ok, prob)
	}
	if _, err := New(static.KubernetesIngress{IngressEndpoint: &static.KubernetesIngressEndpoint{PublishedService: "nope"}}, nil); err == nil || !strings.Contains(err.Error(), "namespace/name") {
		t.Errorf("bad publishedService: %v", err)
	}
	if _, err := New(static.KubernetesIngress{LabelSelector: "a in (("}, nil); err == nil || !strings.Contains(err.Error(), "labelSelector") {
		t.Errorf("bad labelSelector: %v", err)
	}
}

// Sticky sessions from a Service's annotations carry every cookie
// attribute (Traefik issue 10009: the Kubernetes SameSite annotation was
// ignored), and a rolling update's terminating endpoint that still serves
// stays in the service as a fenced server: the sessions pinned to it
// keep it, new ones go to the ready endpoints.
func TestStickyAnnotationsAndTerminatingEndpoint(t *testing.T) {
	f := newFixture()
	f.svc("app", "web", map[string]string{
		AnnotationPrefix + "service.sticky.cookie.name":     "sess",
		AnnotationPrefix + "service.sticky.cookie.samesite": "none",
		AnnotationPrefix + "service.sticky.cookie.secure":   "true",
		AnnotationPrefix + "service.sticky.cookie.httponly": "true",
		AnnotationPrefix + "service.sticky.cookie.maxage":   "3600",
		AnnotationPrefix + "service.sticky.cookie.path":     "/shop",
		AnnotationPrefix + "service.sticky.cookie.domain":   "example.com",
	}, "10.244.0.1")
	old, _, _ := f.slices.GetByKey("app/web-x")
	es := old.(*discoveryv1.EndpointSlice).DeepCopy()
	es.Endpoints = append(es.Endpoints,
		discoveryv1.Endpoint{Addresses: []string{"10.244.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}},
		discoveryv1.Endpoint{Addresses: []string{"10.244.0.3"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(false), Terminating: ptr(true)}})
	_ = f.slices.Update(es)
	_ = f.ings.Add(ingress("app", "shop", nil, nil, irule("shop.test", path("/", netv1.PathTypePrefix, "web"))))
	snap, _ := build(settings{}, f.cluster())
	if len(snap.Problems) != 0 {
		t.Fatalf("problems: %v", snap.Problems)
	}
	lb := snap.Config.HTTP.Services["app-web-80"].LoadBalancer
	c := lb.Sticky.Cookie
	if c.Name != "sess" || c.SameSite != "none" || !c.Secure || !c.HTTPOnly || c.MaxAge != 3600 || c.Path == nil || *c.Path != "/shop" || c.Domain != "example.com" {
		t.Errorf("cookie %+v, want every annotated attribute", c)
	}
	want := []config.Server{{URL: "http://10.244.0.1:8080"}, {URL: "http://10.244.0.2:8080", Fenced: true}}
	if !slices.Equal(lb.Servers, want) {
		t.Errorf("servers %+v, want the ready endpoint and the serving terminating one fenced (the stopped one left out)", lb.Servers)
	}
}
