package ingress

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.MainNetns(m) }

// TestKubeHarness checks the pieces every Kubernetes suite relies on: the
// API server answers kubectl and client-go, refuses loopback endpoints,
// and accepts a pod address where a backend really listens.
func TestKubeHarness(t *testing.T) {
	k := harness.StartKube(t)
	ns := k.Namespace(t, "harness")
	ip := harness.PodIP(t, 1)
	w := harness.StartWhoamiAt(t, "pod1", ip)
	harness.TryGet(t, 60*time.Second, w.URL()+"/", harness.BodyContains("pod1"))

	k.WriteService(t, ns, "web", nil, harness.ServicePort{Name: "http", Port: 80})
	if err := k.SetEndpointsErr(ns, "web", "web-1", []harness.SlicePort{{Name: "http", Port: 80}}, harness.ReadyEndpoint("127.0.0.1")); err == nil ||
		!strings.Contains(err.Error(), "loopback") {
		t.Fatalf("a loopback endpoint was not refused: %v", err)
	}
	k.SetEndpoints(t, ns, "web", "web-1", []harness.SlicePort{{Name: "http", Port: 80}}, harness.ReadyEndpoint(ip))
	got, err := k.Client.DiscoveryV1().EndpointSlices(ns).Get(t.Context(), "web-1", metav1.GetOptions{})
	if err != nil || got.Endpoints[0].Addresses[0] != ip {
		t.Fatalf("endpointslice: %v %v", got, err)
	}
	out := k.Apply(t, `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: gantry-harness
spec:
  controller: traefik.io/ingress-controller
`)
	if !strings.Contains(out, "serverside-applied") {
		t.Errorf("kubectl apply: %q", out)
	}
	if out := k.Kubectl(t, "get", "ingressclass", "gantry-harness", "-o", "jsonpath={.spec.controller}"); out != "traefik.io/ingress-controller" {
		t.Errorf("kubectl get: %q", out)
	}
	k.StopAPIServer(t)
	if _, err := k.KubectlIn("", "get", "ns", "--request-timeout=2s"); err == nil {
		t.Error("kubectl succeeded while the API server was stopped")
	}
	k.StartAPIServer(t)
	k.Kubectl(t, "get", "ingressclass", "gantry-harness")
}
