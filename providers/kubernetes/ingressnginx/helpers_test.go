package ingressnginx

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/routertest"
)

// fakeCluster serves Services (by "ns/name"), Secrets and ConfigMaps.
type fakeCluster struct {
	endpoints  map[string][]string
	fenced     map[string][]string
	secrets    map[string]*corev1.Secret
	configMaps map[string]*corev1.ConfigMap
}

func newCluster() *fakeCluster {
	return &fakeCluster{endpoints: map[string][]string{
		"default/app":    {"10.244.0.1:8080"},
		"default/canary": {"10.244.0.2:8080"},
		"default/other":  {"10.244.0.3:8080"},
	}, secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{}}
}

func (f *fakeCluster) Endpoints(ns, name string, _ netv1.ServiceBackendPort) (ready, fenced []string, err error) {
	e, ok := f.endpoints[ns+"/"+name]
	if !ok {
		return nil, nil, errors.New("service not found")
	}
	return e, f.fenced[ns+"/"+name], nil
}

func (f *fakeCluster) Secret(ns, name string) (*corev1.Secret, error) {
	s, ok := f.secrets[ns+"/"+name]
	if !ok {
		return nil, fmt.Errorf("secret %s/%s not found", ns, name)
	}
	return s, nil
}

func (f *fakeCluster) ConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	c, ok := f.configMaps[ns+"/"+name]
	if !ok {
		return nil, fmt.Errorf("configmap %s/%s not found", ns, name)
	}
	return c, nil
}

var created = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ing builds an Ingress of class nginx (annotation) in default with one
// rule host → path → service:80. kv are annotation names (without
// Prefix) and values.
func ing(name, host, path, svc string, kv ...string) *netv1.Ingress {
	pt := netv1.PathTypePrefix
	in := &netv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: metav1.NewTime(created),
			Annotations: map[string]string{AnnotationIngressClass: "nginx"}},
		Spec: netv1.IngressSpec{Rules: []netv1.IngressRule{{Host: host, IngressRuleValue: netv1.IngressRuleValue{HTTP: &netv1.HTTPIngressRuleValue{
			Paths: []netv1.HTTPIngressPath{{Path: path, PathType: &pt, Backend: netv1.IngressBackend{Service: &netv1.IngressServiceBackend{Name: svc, Port: netv1.ServiceBackendPort{Number: 80}}}}},
		}}}}},
	}
	for i := 0; i+1 < len(kv); i += 2 {
		in.Annotations[Prefix+kv[i]] = kv[i+1]
	}
	return in
}

func pathType(in *netv1.Ingress, pt netv1.PathType) *netv1.Ingress {
	in.Spec.Rules[0].HTTP.Paths[0].PathType = &pt
	return in
}

func withTLS(in *netv1.Ingress, secret string, hosts ...string) *netv1.Ingress {
	in.Spec.TLS = append(in.Spec.TLS, netv1.IngressTLS{Hosts: hosts, SecretName: secret})
	return in
}

// translate runs Translate with the fake cluster and checks the result is
// structurally valid.
func translate(t *testing.T, cl *fakeCluster, o Options, ings ...*netv1.Ingress) Result {
	t.Helper()
	if cl == nil {
		cl = newCluster()
	}
	res := Translate(ings, nil, cl, o)
	if errs := config.Validate(res.Config); len(errs) > 0 {
		t.Fatalf("invalid configuration: %v", errs)
	}
	return res
}

// routeOf compiles conf and returns the router that serves method url on
// entryPoint ("" for none), with the request's headers h ("Name: value").
func routeOf(t *testing.T, conf *config.Configuration, entryPoint, method, url string, h ...string) string {
	t.Helper()
	tab := compile(t, conf)
	r := httptest.NewRequest(method, url, nil)
	for _, kv := range h {
		k, v, _ := strings.Cut(kv, ": ")
		r.Header.Add(k, v)
	}
	name, _ := tab.Lookup(entryPoint, r)
	return strings.TrimSuffix(name, "@"+ProviderName)
}

type nameBuilder struct{ routertest.Base }

func (nameBuilder) Build(_ context.Context, name string, _ *config.Router) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(name)) }), nil
}

func compile(t *testing.T, conf *config.Configuration) *router.Table {
	t.Helper()
	m, err := providers.Merge(map[string]providers.Snapshot{ProviderName: {Config: conf}})
	if err != nil {
		t.Fatal(err)
	}
	tab := router.Compile(context.Background(), m, nameBuilder{}, router.Options{EntryPoints: []router.EntryPoint{{Name: "web"}, {Name: "websecure"}}})
	for n, st := range tab.Report().Routers {
		if st.Status == router.StatusDisabled {
			t.Fatalf("router %s: %+v", n, st)
		}
	}
	return tab
}

// mw returns the router's middleware of a kind suffix ("-rewrite-target").
func mw(t *testing.T, res Result, routerName, suffix string) *config.Middleware {
	t.Helper()
	r := res.Config.HTTP.Routers[routerName]
	if r == nil {
		t.Fatalf("no router %s in %v", routerName, keys(res.Config.HTTP.Routers))
	}
	for _, n := range r.Middlewares {
		if strings.HasSuffix(n, suffix) {
			return res.Config.HTTP.Middlewares[n]
		}
	}
	return nil
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// verdict returns the report's verdict on annotation of Ingress name.
func verdict(t *testing.T, res Result, name, annotation string) Verdict {
	t.Helper()
	for _, in := range res.Report.Ingresses {
		if in.Name != name {
			continue
		}
		for _, v := range in.Annotations {
			if v.Annotation == annotation {
				return v
			}
		}
	}
	t.Fatalf("no verdict on %s for ingress %s: %+v", annotation, name, res.Report)
	return Verdict{}
}

// problemWith fails unless a problem's source and message contain all of want.
func problemWith(t *testing.T, res Result, want ...string) providers.Problem {
	t.Helper()
	for _, p := range res.Problems {
		s := p.Source + ": " + p.Message
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return p
		}
	}
	t.Fatalf("no problem with %q in %v", want, res.Problems)
	return providers.Problem{}
}

// rewrite applies a replacePathRegex middleware as the dataplane does.
func rewrite(t *testing.T, m *config.Middleware, path string) string {
	t.Helper()
	if m == nil || m.ReplacePathRegex == nil {
		t.Fatalf("not a replacePathRegex: %+v", m)
	}
	re := regexp.MustCompile(m.ReplacePathRegex.Regex)
	if !re.MatchString(path) {
		return path
	}
	return re.ReplaceAllString(path, m.ReplacePathRegex.Replacement)
}
