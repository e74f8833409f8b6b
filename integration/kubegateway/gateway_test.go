package kubegateway

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// backend starts a whoami named name on the pod address and writes
// Service ns/name (port 80, "http") with an EndpointSlice naming it.
func (e *env) backend(t *testing.T, ns, name string) {
	t.Helper()
	w := harness.StartWhoamiAt(t, name, e.ip)
	_, port, _ := net.SplitHostPort(w.Addr)
	p, _ := strconv.Atoi(port)
	e.k.WriteService(t, ns, name, nil, harness.ServicePort{Name: "http", Port: 80})
	e.k.SetEndpoints(t, ns, name, name+"-1", []harness.SlicePort{{Name: "http", Port: int32(p)}}, harness.ReadyEndpoint(e.ip))
}

func TestGatewayAPI(t *testing.T) {
	e := start(t, "")
	e.gatewayClass(t)
	ns := e.k.Namespace(t, "gw")
	other := e.k.Namespace(t, "other")
	e.backend(t, ns, "web")
	e.backend(t, other, "remote")
	cert, key := e.k.TestCert(t, "secure.example.com")
	e.k.WriteTLSSecret(t, ns, "secure", cert, key)
	e.k.Apply(t, fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: gantry
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - name: https
    port: 443
    protocol: HTTPS
    hostname: secure.example.com
    tls: {certificateRefs: [{name: secure}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: %[1]s}
spec:
  parentRefs: [{name: gw}]
  hostnames: [app.example.com, secure.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{name: web, port: 80}]
`, ns))

	t.Run("routes and statuses", func(t *testing.T) {
		e.waitRouteCond(t, ns, "app", "Accepted", metav1.ConditionTrue, "Accepted")
		e.waitRouteCond(t, ns, "app", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
		harness.TryGet(t, 30*time.Second, e.url(80, "/x"), harness.Host("app.example.com"), harness.StatusIs(200), harness.BodyContains("Name: web"))
		if r, err := harness.Get(e.url(80, "/x"), harness.Host("nothing.example.com")); err != nil || r.StatusCode != 404 {
			t.Errorf("a host no route names: %v %v, want 404", r, err)
		}
		harness.Try(t, 30*time.Second, func() error {
			g := e.gateway(t, ns, "gw")
			if !hasCond(g.Status.Conditions, "Programmed", metav1.ConditionTrue, "Programmed") || !hasCond(g.Status.Conditions, "Accepted", metav1.ConditionTrue, "Accepted") {
				return fmt.Errorf("gateway conditions %+v", g.Status.Conditions)
			}
			if len(g.Status.Addresses) != 1 || g.Status.Addresses[0].Value != e.ip {
				return fmt.Errorf("addresses %+v, want %s", g.Status.Addresses, e.ip)
			}
			if len(g.Status.Listeners) != 2 || g.Status.Listeners[0].AttachedRoutes != 1 || g.Status.Listeners[1].AttachedRoutes != 1 {
				return fmt.Errorf("listeners %+v", g.Status.Listeners)
			}
			if c := g.Status.Conditions[0]; c.ObservedGeneration != g.Generation || c.LastTransitionTime.IsZero() {
				return fmt.Errorf("condition %+v: want observedGeneration %d and a transition time", c, g.Generation)
			}
			return nil
		})
	})

	t.Run("HTTPS listener serves the Secret's certificate", func(t *testing.T) {
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: "secure.example.com", RootCAs: caPool(t, e.k.CAFile)}}}
		harness.Try(t, 30*time.Second, func() error {
			req, _ := http.NewRequest("GET", fmt.Sprintf("https://%s:443/", e.ip), nil)
			req.Host = "secure.example.com"
			resp, err := c.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		})
	})

	t.Run("status is written only on change", func(t *testing.T) {
		before, err := e.gw.GatewayV1().HTTPRoutes(ns).Get(ctx(t), "app", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Another route changes the configuration and the Gateway's
		// attachedRoutes, not app's status.
		e.k.Apply(t, fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: second, namespace: %s}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [second.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
`, ns))
		e.waitRouteCond(t, ns, "second", "Accepted", metav1.ConditionTrue, "Accepted")
		harness.Try(t, 30*time.Second, func() error {
			if n := e.gateway(t, ns, "gw").Status.Listeners[0].AttachedRoutes; n != 2 {
				return fmt.Errorf("attachedRoutes %d, want 2", n)
			}
			return nil
		})
		after, err := e.gw.GatewayV1().HTTPRoutes(ns).Get(ctx(t), "app", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.ResourceVersion != before.ResourceVersion {
			t.Errorf("HTTPRoute app was rewritten (resourceVersion %s -> %s) though its status did not change", before.ResourceVersion, after.ResourceVersion)
		}
	})

	t.Run("cross-namespace backendRef needs a ReferenceGrant", func(t *testing.T) {
		e.k.Apply(t, fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cross, namespace: %s}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [cross.example.com]
  rules: [{backendRefs: [{name: remote, namespace: %s, port: 80}]}]
`, ns, other))
		e.waitRouteCond(t, ns, "cross", "ResolvedRefs", metav1.ConditionFalse, "RefNotPermitted")
		harness.TryGet(t, 30*time.Second, e.url(80, "/"), harness.Host("cross.example.com"), harness.StatusIs(500))
		e.k.Apply(t, fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: allow, namespace: %s}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: %s}]
  to: [{group: "", kind: Service}]
`, other, ns))
		e.waitRouteCond(t, ns, "cross", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
		harness.TryGet(t, 30*time.Second, e.url(80, "/"), harness.Host("cross.example.com"), harness.StatusIs(200), harness.BodyContains("Name: remote"))
	})

	t.Run("a deleted route stops serving", func(t *testing.T) {
		e.k.Kubectl(t, "delete", "-n", ns, "httproute", "second")
		harness.TryGet(t, 30*time.Second, e.url(80, "/"), harness.Host("second.example.com"), harness.StatusIs(404))
	})
}

// caPool trusts the PEM CA in file.
func caPool(t *testing.T, file string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		t.Fatalf("no certificate in %s", file)
	}
	return p
}
