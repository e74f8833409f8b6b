package harness

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PodIPs is how many addresses MainNetns adds: 10.244.0.1 to 10.244.0.20.
const PodIPs = 20

// What MainNetns found: inNetns when the suite runs in its own namespace
// with the pod addresses on lo, else netnsReason says why not.
var (
	inNetns     bool
	netnsReason = "the suite's TestMain does not call harness.MainNetns"
)

// PodIP returns "10.244.0.<i>" (1 <= i <= PodIPs), an address on the
// suite's loopback that the API server accepts in EndpointSlices, for a
// backend to listen on and an EndpointSlice to name. Outside MainNetns's
// namespace it is MissingTool naming the reason.
func PodIP(t testing.TB, i int) string {
	t.Helper()
	if !inNetns {
		MissingTool(t, "pod addresses need the suite's network namespace: "+netnsReason)
	}
	if i < 1 || i > PodIPs {
		t.Fatalf("harness: PodIP(%d): want 1..%d", i, PodIPs)
	}
	return fmt.Sprintf("10.244.0.%d", i)
}

// StartWhoamiAt starts a whoami backend named name on a free port of ip
// (a PodIP) and returns it once it listens.
func StartWhoamiAt(t testing.TB, name, ip string, args ...string) *Whoami {
	t.Helper()
	return StartWhoamiProc(t, name, append([]string{"--addr", ip + ":0"}, args...)...)
}

var nsSeq atomic.Int64

// Namespace creates a fresh namespace named prefix-<n> and returns its
// name. (Without a controller manager a deleted namespace never goes
// away, so every test takes its own.)
func (k *Kube) Namespace(t testing.TB, prefix string) string {
	t.Helper()
	cx, cancel := apiCtx()
	defer cancel()
	name := fmt.Sprintf("%s-%d", prefix, nsSeq.Add(1))
	_, err := k.Client.CoreV1().Namespaces().Create(cx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("harness: create namespace %s: %v", name, err)
	}
	return name
}

// ServicePort is one port of a Service written by WriteService: Name
// (may be empty for a single port), Port, and TargetPort (a number or a
// container port name; empty means Port).
type ServicePort struct {
	Name       string
	Port       int32
	TargetPort string
}

// WriteService creates or replaces a ClusterIP Service ns/name with ports
// (the API server assigns the ClusterIP) and returns it. Annotations may
// be nil.
func (k *Kube) WriteService(t testing.TB, ns, name string, annotations map[string]string, ports ...ServicePort) *corev1.Service {
	t.Helper()
	cx, cancel := apiCtx()
	defer cancel()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}}
	for _, p := range ports {
		sp := corev1.ServicePort{Name: p.Name, Port: p.Port, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(p.Port)}
		if p.TargetPort != "" {
			sp.TargetPort = intstr.Parse(p.TargetPort)
		}
		svc.Spec.Ports = append(svc.Spec.Ports, sp)
	}
	c := k.Client.CoreV1().Services(ns)
	out, err := c.Create(cx, svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var cur *corev1.Service
		if cur, err = c.Get(cx, name, metav1.GetOptions{}); err == nil {
			cur.Annotations, cur.Spec.Ports = annotations, svc.Spec.Ports
			out, err = c.Update(cx, cur, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		t.Fatalf("harness: write service %s/%s: %v", ns, name, err)
	}
	return out
}

// Endpoint is one endpoint of an EndpointSlice with its conditions
// (discovery.k8s.io/v1: ready = serving and not terminating).
type Endpoint struct {
	IP                          string
	Ready, Serving, Terminating bool
}

// ReadyEndpoint is a running, ready pod's endpoint.
func ReadyEndpoint(ip string) Endpoint { return Endpoint{IP: ip, Ready: true, Serving: true} }

// TerminatingEndpoint is a pod being deleted that still passes its
// readiness probe (serving, terminating, not ready).
func TerminatingEndpoint(ip string) Endpoint {
	return Endpoint{IP: ip, Serving: true, Terminating: true}
}

// NotReadyEndpoint is a pod failing its readiness probe.
func NotReadyEndpoint(ip string) Endpoint { return Endpoint{IP: ip} }

// SlicePort is a port of an EndpointSlice: Name matches the Service
// port's name ("" for an unnamed port).
type SlicePort struct {
	Name string
	Port int32
}

// SetEndpoints creates or replaces EndpointSlice ns/slice of Service
// service (label kubernetes.io/service-name) with ports and endpoints
// (IPv4), as the endpoint-slice controller would.
func (k *Kube) SetEndpoints(t testing.TB, ns, service, slice string, ports []SlicePort, eps ...Endpoint) {
	t.Helper()
	if err := k.SetEndpointsErr(ns, service, slice, ports, eps...); err != nil {
		t.Fatalf("harness: %v", err)
	}
}

// SetEndpointsErr is SetEndpoints returning the error.
func (k *Kube) SetEndpointsErr(ns, service, slice string, ports []SlicePort, eps ...Endpoint) error {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: slice, Labels: map[string]string{
			discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: "gantry-test",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, p := range ports {
		name, port, proto := p.Name, p.Port, corev1.ProtocolTCP
		es.Ports = append(es.Ports, discoveryv1.EndpointPort{Name: &name, Port: &port, Protocol: &proto})
	}
	for _, e := range eps {
		ready, serving, term := e.Ready, e.Serving, e.Terminating
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.IP},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &term}})
	}
	c := k.Client.DiscoveryV1().EndpointSlices(ns)
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.Create(cx, es, metav1.CreateOptions{})
	for i := 0; apierrors.IsAlreadyExists(err) || (i > 0 && apierrors.IsConflict(err)); i++ {
		var cur *discoveryv1.EndpointSlice
		if cur, err = c.Get(cx, slice, metav1.GetOptions{}); err != nil {
			break
		}
		cur.Labels, cur.Ports, cur.Endpoints = es.Labels, es.Ports, es.Endpoints
		_, err = c.Update(cx, cur, metav1.UpdateOptions{})
		if i > 10 {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("write endpointslice %s/%s: %w", ns, slice, err)
	}
	return nil
}

// WriteTLSSecret creates or replaces Secret ns/name of type
// kubernetes.io/tls holding certPEM and keyPEM.
func (k *Kube) WriteTLSSecret(t testing.TB, ns, name string, certPEM, keyPEM []byte) {
	t.Helper()
	cx, cancel := apiCtx()
	defer cancel()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM}}
	c := k.Client.CoreV1().Secrets(ns)
	_, err := c.Create(cx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var cur *corev1.Secret
		if cur, err = c.Get(cx, name, metav1.GetOptions{}); err == nil {
			cur.Data = s.Data
			_, err = c.Update(cx, cur, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		t.Fatalf("harness: write secret %s/%s: %v", ns, name, err)
	}
}

// ServiceAccountToken creates ServiceAccount ns/name (if missing) and
// returns a token for it from the TokenRequest API (valid 1 h), for tests
// of least-privilege RBAC.
func (k *Kube) ServiceAccountToken(t testing.TB, ns, name string) string {
	t.Helper()
	cx, cancel := apiCtx()
	defer cancel()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if _, err := k.Client.CoreV1().ServiceAccounts(ns).Create(cx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("harness: create serviceaccount %s/%s: %v", ns, name, err)
	}
	secs := int64(3600)
	tr, err := k.Client.CoreV1().ServiceAccounts(ns).CreateToken(cx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("harness: token for serviceaccount %s/%s: %v", ns, name, err)
	}
	return strings.TrimSpace(tr.Status.Token)
}

// apiCtx bounds the API calls of one helper to 30 s.
func apiCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}
