package kubegateway

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestTCPRoute: with experimentalChannel, a TCP listener on port 8090 is
// served by the entrypoint of that port and a TCPRoute forwards its
// connections to the Service's endpoints (an HTTP backend here, spoken to
// through the TCP proxy).
func TestTCPRoute(t *testing.T) {
	e := start(t, "    experimentalChannel: true\n")
	e.gatewayClass(t)
	ns := e.k.Namespace(t, "tcp")
	e.backend(t, ns, "raw")
	e.k.Apply(t, fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: gantry
  listeners:
  - {name: tcp, port: 8090, protocol: TCP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: raw, namespace: %[1]s}
spec:
  parentRefs: [{name: gw, sectionName: tcp}]
  rules: [{backendRefs: [{name: raw, port: 80}]}]
`, ns))
	harness.TryGet(t, 60*time.Second, e.url(8090, "/"), harness.StatusIs(200), harness.BodyContains("Name: raw"))
	harness.Try(t, 30*time.Second, func() error {
		r, err := e.gw.GatewayV1().TCPRoutes(ns).Get(ctx(t), "raw", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, p := range r.Status.Parents {
			if hasCond(p.Conditions, "Accepted", metav1.ConditionTrue, "Accepted") {
				return nil
			}
		}
		return fmt.Errorf("TCPRoute status %+v", r.Status.Parents)
	})
}
