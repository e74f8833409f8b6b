package k8s

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"

	"github.com/gantry-proxy/gantry/config"
)

func ptr[T any](v T) *T { return &v }

func service(ns, name, clusterIP string, typ corev1.ServiceType, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Type: typ, ClusterIP: clusterIP, Ports: ports}}
}

func slice(ns, name, svc string, ports map[string]int32, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, Endpoints: eps}
	for n, p := range ports {
		es.Ports = append(es.Ports, discoveryv1.EndpointPort{Name: ptr(n), Port: ptr(p)})
	}
	return es
}

func ep(ip string, ready, serving, terminating *bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ready, Serving: serving, Terminating: terminating}}
}

func testBackends(t *testing.T, allowExternal bool, objs ...any) Backends {
	t.Helper()
	svcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	slices := cache.NewIndexer(cache.MetaNamespaceKeyFunc, ServiceNameIndexers)
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *corev1.Service:
			err = svcs.Add(o)
		case *discoveryv1.EndpointSlice:
			err = slices.Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return Backends{Services: ListerOf[*corev1.Service](svcs), Slices: ListerOf[*discoveryv1.EndpointSlice](slices), AllowExternalName: allowExternal}
}

func TestResolveEndpointConditions(t *testing.T) {
	T, F := ptr(true), ptr(false)
	b := testBackends(t, false,
		service("app", "web", "10.0.0.7", corev1.ServiceTypeClusterIP,
			corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromString("web")},
			corev1.ServicePort{Name: "https-alt", Port: 8443}),
		slice("app", "web-a", "web", map[string]int32{"http": 8080, "https-alt": 9443},
			ep("10.244.0.1", T, T, F),       // ready
			ep("10.244.0.2", F, T, T),       // terminating, still serving: fenced (sticky sessions only)
			ep("10.244.0.6", F, F, T),       // terminating, no longer serving: gone
			ep("10.244.0.3", F, F, F),       // not ready
			ep("10.244.0.4", nil, nil, nil), // conditions unknown: ready
			ep("10.244.0.1", T, T, F),       // duplicate
		),
		slice("app", "web-b", "web", map[string]int32{"http": 8080}, ep("10.244.0.5", F, T, F)), // serving though not ready
		slice("app", "other", "other", map[string]int32{"http": 1}, ep("10.244.0.9", T, T, F)),
	)
	got, err := b.Resolve("app", "web", PortRef{Name: "http"}, false)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got.Addrs)
	want := []string{"10.244.0.1:8080", "10.244.0.4:8080", "10.244.0.5:8080"}
	if !slices.Equal(got.Addrs, want) {
		t.Errorf("addresses %v, want %v", got.Addrs, want)
	}
	if !slices.Equal(got.Fenced, []string{"10.244.0.2:8080"}) {
		t.Errorf("fenced %v, want the terminating endpoint that still serves", got.Fenced)
	}
	s := got.Servers("")
	if len(s) != 4 || s[0].URL != "http://"+got.Addrs[0] || s[0].Fenced || s[3] != (config.Server{URL: "http://10.244.0.2:8080", Fenced: true}) {
		t.Errorf("servers %+v, want the three ready ones then the fenced one", s)
	}
	tls, err := b.Resolve("app", "web", PortRef{Number: 8443}, false)
	if err != nil {
		t.Fatal(err)
	}
	if s := tls.Servers(""); len(s) != 3 || s[0].URL != "https://10.244.0.1:9443" || s[2] != (config.Server{URL: "https://10.244.0.2:9443", Fenced: true}) {
		t.Errorf("https-alt servers %v", s)
	}
	native, err := b.Resolve("app", "web", PortRef{Number: 80}, true)
	if err != nil || !slices.Equal(native.Addrs, []string{"10.0.0.7:80"}) {
		t.Errorf("nativeLB: %v %v", native.Addrs, err)
	}
}

func TestResolveErrors(t *testing.T) {
	b := testBackends(t, false,
		service("app", "web", "10.0.0.7", corev1.ServiceTypeClusterIP, corev1.ServicePort{Name: "http", Port: 80}),
		service("app", "headless", "None", corev1.ServiceTypeClusterIP, corev1.ServicePort{Port: 80}),
		service("app", "ext", "", corev1.ServiceTypeExternalName, corev1.ServicePort{Port: 443}),
	)
	b.Services.indexers[0].Update(func() *corev1.Service {
		s := service("app", "ext", "", corev1.ServiceTypeExternalName, corev1.ServicePort{Port: 443})
		s.Spec.ExternalName = "api.example.com"
		return s
	}())
	for _, c := range []struct {
		name   string
		port   PortRef
		native bool
		want   string
	}{
		{"missing", PortRef{Number: 80}, false, "service app/missing not found"},
		{"web", PortRef{Number: 81}, false, "service app/web has no port 81"},
		{"web", PortRef{Name: "grpc"}, false, "service app/web has no port grpc"},
		{"headless", PortRef{Number: 80}, true, "headless"},
		{"ext", PortRef{Number: 443}, false, "allowExternalNameServices is false"},
	} {
		_, err := b.Resolve("app", c.name, c.port, c.native)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s port %s: error %v, want %q", c.name, c.port, err, c.want)
		}
	}
	b.AllowExternalName = true
	got, err := b.Resolve("app", "ext", PortRef{Number: 443}, false)
	if err != nil || len(got.Servers("")) != 1 || got.Servers("")[0].URL != "https://api.example.com:443" {
		t.Errorf("allowed ExternalName: %v %v", got.Addrs, err)
	}
}

func TestTLSSecret(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = idx.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "empty"}, Data: map[string][]byte{"tls.crt": []byte("x")}})
	_ = idx.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "bad"}, Data: map[string][]byte{"tls.crt": []byte("x"), "tls.key": []byte("y")}})
	l := ListerOf[*corev1.Secret](idx)
	for name, want := range map[string]string{
		"none":  "secret app/none not found",
		"empty": "secret app/empty: tls.key missing or empty",
		"bad":   "secret app/bad: tls.crt/tls.key:",
	} {
		if _, err := TLSSecret(l, "app", name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}
