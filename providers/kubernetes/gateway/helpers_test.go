package gateway

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/rule"
)

// fakeBackends serves Services and Secrets from maps.
type fakeBackends struct {
	services map[string]Backend // "ns/name/port"
	secrets  map[string]bool    // "ns/name"
}

func (f *fakeBackends) Service(ns, name string, port int32) (Backend, error) {
	b, ok := f.services[fmt.Sprintf("%s/%s/%d", ns, name, port)]
	if !ok {
		return Backend{}, fmt.Errorf("Service %s/%s port %d: %w", ns, name, port, ErrNotFound)
	}
	return b, nil
}

func (f *fakeBackends) Certificate(ns, name string) (string, string, error) {
	if !f.secrets[ns+"/"+name] {
		return "", "", fmt.Errorf("Secret %s/%s: %w", ns, name, ErrNotFound)
	}
	return "CERT " + ns + "/" + name, "KEY " + ns + "/" + name, nil
}

func fakeBE() *fakeBackends {
	return &fakeBackends{
		services: map[string]Backend{
			"default/web/80":     {Addresses: []string{"10.244.0.1:8080", "10.244.0.2:8080"}, Protocol: corev1.ProtocolTCP},
			"default/api/8080":   {Addresses: []string{"10.244.0.3:9000"}, Protocol: corev1.ProtocolTCP},
			"other/db/5432":      {Addresses: []string{"10.244.0.4:5432"}, Protocol: corev1.ProtocolTCP},
			"default/dns/53":     {Addresses: []string{"10.244.0.5:53"}, Protocol: corev1.ProtocolUDP},
			"default/grpc/50051": {Addresses: []string{"10.244.0.6:50051"}, Protocol: corev1.ProtocolTCP},
		},
		secrets: map[string]bool{"default/tls": true, "certs/shared": true},
	}
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func meta(ns, name string, age int) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 3, CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Minute))}
}

func class() *gwv1.GatewayClass {
	return &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "gantry", Generation: 1}, Spec: gwv1.GatewayClassSpec{ControllerName: DefaultControllerName}}
}

func gw(listeners ...gwv1.Listener) *gwv1.Gateway {
	return &gwv1.Gateway{ObjectMeta: meta("default", "gw", 0), Spec: gwv1.GatewaySpec{GatewayClassName: "gantry", Listeners: listeners}}
}

func httpListener(name string, port int32, host string) gwv1.Listener {
	l := gwv1.Listener{Name: gwv1.SectionName(name), Port: gwv1.PortNumber(port), Protocol: gwv1.HTTPProtocolType}
	if host != "" {
		l.Hostname = new(gwv1.Hostname(host))
	}
	return l
}

func opts() Options {
	return Options{EntryPoints: map[string]EntryPoint{
		"web":       {Port: 80},
		"websecure": {Port: 443},
		"tcp":       {Port: 5432},
		"udp":       {Port: 53, UDP: true},
		"alt":       {Port: 8080},
	}}
}

func parent(name string) gwv1.ParentReference {
	return gwv1.ParentReference{Name: gwv1.ObjectName(name)}
}

func svcRef(name string, port int32) gwv1.HTTPBackendRef {
	return gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name), Port: new(gwv1.PortNumber(port))}}}
}

func route(ns, name string, age int, hosts []string, rules ...gwv1.HTTPRouteRule) *gwv1.HTTPRoute {
	r := &gwv1.HTTPRoute{ObjectMeta: meta(ns, name, age)}
	r.Spec.ParentRefs = []gwv1.ParentReference{{Name: "gw", Namespace: new(gwv1.Namespace("default"))}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gwv1.Hostname(h))
	}
	r.Spec.Rules = rules
	return r
}

func prefix(p string) gwv1.HTTPRouteMatch {
	return gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Type: new(gwv1.PathMatchPathPrefix), Value: new(p)}}
}

func exact(p string) gwv1.HTTPRouteMatch {
	return gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Type: new(gwv1.PathMatchExact), Value: new(p)}}
}

// condOf returns the condition of type typ, failing the test when absent.
func condOf(t *testing.T, cs []metav1.Condition, typ string) metav1.Condition {
	t.Helper()
	c := findCond(cs, typ)
	if c == nil {
		t.Fatalf("no %s condition in %+v", typ, cs)
	}
	return *c
}

func wantCond(t *testing.T, cs []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	c := condOf(t, cs, typ)
	if c.Status != status || c.Reason != reason {
		t.Errorf("%s = %s/%s (%s), want %s/%s", typ, c.Status, c.Reason, c.Message, status, reason)
	}
}

func routeStatus(t *testing.T, res Result, kind, ns, name string) []gwv1.RouteParentStatus {
	t.Helper()
	st, ok := res.Status.Routes[RouteKey{Kind: kind, NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}]
	if !ok {
		t.Fatalf("no status for %s %s/%s", kind, ns, name)
	}
	return st
}

func gwStatus(t *testing.T, res Result) gwv1.GatewayStatus {
	t.Helper()
	st, ok := res.Status.Gateways[types.NamespacedName{Namespace: "default", Name: "gw"}]
	if !ok {
		t.Fatal("no Gateway status")
	}
	return st
}

// checkConfig fails the test when a rule of res does not parse or the
// configuration does not validate.
func checkConfig(t *testing.T, res Result) {
	t.Helper()
	for name, r := range res.Config.HTTP.Routers {
		if _, err := rule.Parse(r.Rule); err != nil {
			t.Errorf("router %s: rule %q: %v", name, r.Rule, err)
		}
	}
	if res.Config.TCP != nil {
		for name, r := range res.Config.TCP.Routers {
			if _, err := rule.Parse(r.Rule); err != nil {
				t.Errorf("TCP router %s: rule %q: %v", name, r.Rule, err)
			}
		}
	}
	for _, e := range config.Validate(res.Config) {
		t.Errorf("invalid: %v", e)
	}
}
