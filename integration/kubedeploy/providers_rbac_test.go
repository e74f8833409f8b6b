package kubedeploy

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// gatewayCRDs is the standard-channel Gateway API CRDs shipped in the
// gateway-api module Gantry builds with.
func gatewayCRDs(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-json", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("locating the gateway-api module: %v", err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("locating the gateway-api module: %v (%s)", err, out)
	}
	return filepath.Join(m.Dir, "config", "crd", "standard")
}

// everyProvider is the example's static configuration (entrypoints on
// free ports, see localStatic) with all four Kubernetes providers on:
// kubernetesIngress writing Ingress status (ingressEndpoint),
// kubernetesCRD, kubernetesGateway with the experimental kinds (TCPRoute,
// UDPRoute) and status addresses, and kubernetesIngressNGINX; plus tcp
// and udp entrypoints for the Gateway's TCP and UDP listeners.
func everyProvider(t *testing.T, lbIP string) (static string, web, websecure, traefik, tcp, udp int) {
	t.Helper()
	static, web, websecure, traefik = localStatic(t, t.TempDir())
	tcp, udp = harness.FreePort(t), harness.FreePort(t)
	for from, to := range map[string]string{
		"entryPoints:\n": fmt.Sprintf("entryPoints:\n  tcp: {address: \"127.0.0.1:%d\"}\n  udp: {address: \"127.0.0.1:%d/udp\"}\n", tcp, udp),
		"  kubernetesIngress: {}\n": "  kubernetesIngress:\n    ingressEndpoint: {ip: " + lbIP + "}\n" +
			"  kubernetesGateway:\n    experimentalChannel: true\n    statusAddress: {ip: " + lbIP + "}\n" +
			"  kubernetesIngressNGINX:\n    globalAllowedResponseHeaders: [X-Team]\n",
	} {
		if !strings.Contains(static, from) {
			t.Fatalf("the example's configuration has no %q", from)
		}
		static = strings.Replace(static, from, to, 1)
	}
	return static, web, websecure, traefik, tcp, udp
}

// The example's RBAC is exactly what the providers need: Gantry in a pod
// with the example's service account (a token bound by nothing but
// examples/kubernetes/10-rbac.yaml, applied as the README says) and all
// four Kubernetes providers on serves an Ingress, an IngressRoute with a
// basicAuth Secret, an ingress-nginx Ingress with a Secret and a ConfigMap,
// and Gateway API routes of every kind (an HTTPRoute to another namespace
// through a ReferenceGrant, on a listener whose allowedRoutes selects
// namespaces by label); writes the status of the Ingress, the
// GatewayClass, the Gateway and every route; and is refused nothing (no
// problem, no "forbidden" in its log). Removing any rule of the
// ClusterRole fails it.
func TestExampleRBACEveryProvider(t *testing.T) {
	k := harness.StartKube(t)
	applyExamples(t, k)
	k.Kubectl(t, "apply", "--server-side", "-f", gatewayCRDs(t))
	k.Kubectl(t, "wait", "--for", "condition=established", "--timeout", "120s", "crd", "--all")

	ip := harness.PodIP(t, 1)
	be := harness.StartWhoamiAt(t, "app", ip)
	_, bePort, _ := strings.Cut(be.Addr, ":")
	port, _ := strconv.Atoi(bePort)
	app, shared := k.Namespace(t, "app"), k.Namespace(t, "shared")
	for _, ns := range []string{app, shared} {
		k.WriteService(t, ns, "whoami", nil, harness.ServicePort{Name: "http", Port: 80, TargetPort: "http"})
		k.SetEndpoints(t, ns, "whoami", "whoami-1", []harness.SlicePort{{Name: "http", Port: int32(port)}}, harness.ReadyEndpoint(ip))
	}
	const lbIP = "192.0.2.10"
	static, web, websecure, traefik, tcp, udp := everyProvider(t, lbIP)

	sum := sha1.Sum([]byte("s3cret"))
	htpasswd := "alice:{SHA}" + base64.StdEncoding.EncodeToString(sum[:])
	k.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: crd-users, namespace: %[1]s}
stringData: {users: %[2]q}
---
apiVersion: v1
kind: Secret
metadata: {name: nginx-users, namespace: %[1]s}
stringData: {auth: %[2]q}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: hdrs, namespace: %[1]s}
data: {X-Team: payments}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: plain
  namespace: %[1]s
  annotations: {traefik.ingress.kubernetes.io/router.entrypoints: web}
spec:
  ingressClassName: gantry
  rules:
    - host: ingress.example.test
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: whoami, port: {name: http}}}}
---
apiVersion: traefik.io/v1alpha1
kind: Middleware
metadata: {name: auth, namespace: %[1]s}
spec:
  basicAuth: {secret: crd-users}
---
apiVersion: traefik.io/v1alpha1
kind: IngressRoute
metadata: {name: app, namespace: %[1]s}
spec:
  entryPoints: [web]
  routes:
    - match: Host(`+"`crd.example.test`"+`)
      kind: Rule
      middlewares: [{name: auth}]
      services: [{name: whoami, port: 80}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: nginx
  namespace: %[1]s
  annotations:
    kubernetes.io/ingress.class: nginx
    nginx.ingress.kubernetes.io/auth-type: basic
    nginx.ingress.kubernetes.io/auth-secret: nginx-users
    nginx.ingress.kubernetes.io/custom-headers: %[1]s/hdrs
spec:
  rules:
    - host: nginx.example.test
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: whoami, port: {name: http}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gantry}
spec: {controllerName: traefik.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: gantry
  listeners:
    - name: http
      port: %[3]d
      protocol: HTTP
      allowedRoutes:
        namespaces:
          from: Selector
          selector: {matchLabels: {kubernetes.io/metadata.name: %[1]s}}
    - {name: tls, port: %[4]d, protocol: TLS, hostname: tls.example.test, tls: {mode: Passthrough}}
    - {name: tcp, port: %[5]d, protocol: TCP}
    - {name: udp, port: %[6]d, protocol: UDP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: http, namespace: %[1]s}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [gw.example.test]
  rules: [{backendRefs: [{name: whoami, namespace: %[7]s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: from-app, namespace: %[7]s}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: %[1]s}]
  to: [{group: "", kind: Service}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc, namespace: %[1]s}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [grpc.example.test]
  rules: [{backendRefs: [{name: whoami, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: tls, namespace: %[1]s}
spec:
  parentRefs: [{name: gw, sectionName: tls}]
  hostnames: [tls.example.test]
  rules: [{backendRefs: [{name: whoami, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: tcp, namespace: %[1]s}
spec:
  parentRefs: [{name: gw, sectionName: tcp}]
  rules: [{backendRefs: [{name: whoami, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: dns, namespace: %[1]s}
spec:
  ports: [{name: dns, port: 53, protocol: UDP, targetPort: 5353}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: dns-1
  namespace: %[1]s
  labels: {kubernetes.io/service-name: dns}
addressType: IPv4
ports: [{name: dns, port: 5353, protocol: UDP}]
endpoints: [{addresses: [%[8]s], conditions: {ready: true}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: udp, namespace: %[1]s}
spec:
  parentRefs: [{name: gw, sectionName: udp}]
  rules: [{backendRefs: [{name: dns, port: 53}]}]
`, app, htpasswd, web, websecure, tcp, udp, shared, ip))

	token := k.ServiceAccountToken(t, gantryNS, gantrySA)
	g := inPod(t, k, token, static)

	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:s3cret"))
	url := func(p int) string { return fmt.Sprintf("http://127.0.0.1:%d/", p) }
	const wait = 2 * time.Minute
	served := harness.BodyContains("Hostname")
	harness.TryGet(t, wait, url(web), harness.Host("ingress.example.test"), harness.StatusIs(http.StatusOK), served)
	harness.TryGet(t, wait, url(web), harness.Host("crd.example.test"), harness.StatusIs(http.StatusUnauthorized))
	harness.TryGet(t, wait, url(web), harness.Host("crd.example.test"), harness.Header("Authorization", basic), harness.StatusIs(http.StatusOK), served)
	harness.TryGet(t, wait, url(web), harness.Host("nginx.example.test"), harness.StatusIs(http.StatusUnauthorized))
	harness.TryGet(t, wait, url(web), harness.Host("nginx.example.test"), harness.Header("Authorization", basic), harness.StatusIs(http.StatusOK), served,
		harness.Cond(func(r *harness.Response) error {
			if v := r.Header.Get("X-Team"); v != "payments" {
				return fmt.Errorf("X-Team %q, want payments (custom-headers ConfigMap)", v)
			}
			return nil
		}))
	harness.TryGet(t, wait, url(web), harness.Host("gw.example.test"), harness.StatusIs(http.StatusOK), served)
	harness.TryGet(t, wait, url(tcp), harness.StatusIs(http.StatusOK), served) // TCPRoute to an HTTP backend

	// Statuses written back with the token.
	jp := func(args ...string) func() error {
		want := args[len(args)-1]
		return func() error {
			out := strings.TrimSpace(k.Kubectl(t, append([]string{"get"}, args[:len(args)-1]...)...))
			if out != want {
				return fmt.Errorf("kubectl get %s: %q, want %q", strings.Join(args[:len(args)-1], " "), out, want)
			}
			return nil
		}
	}
	cond := func(typ string) string { return `{.status.conditions[?(@.type=="` + typ + `")].status}` }
	parent := func(typ string) string {
		return `{.status.parents[?(@.controllerName=="traefik.io/gateway-controller")].conditions[?(@.type=="` + typ + `")].status}`
	}
	checks := []func() error{
		jp("ingress", "-n", app, "plain", "-o", "jsonpath={.status.loadBalancer.ingress[0].ip}", lbIP),
		jp("gatewayclass", "gantry", "-o", "jsonpath="+cond("Accepted"), "True"),
		jp("gateway", "-n", app, "gw", "-o", "jsonpath="+cond("Programmed"), "True"),
		jp("gateway", "-n", app, "gw", "-o", "jsonpath={.status.addresses[0].value}", lbIP),
	}
	for _, kind := range []string{"httproute/http", "grpcroute/grpc", "tlsroute/tls", "tcproute/tcp", "udproute/udp"} {
		checks = append(checks, jp(kind, "-n", app, "-o", "jsonpath="+parent("Accepted"), "True"),
			jp(kind, "-n", app, "-o", "jsonpath="+parent("ResolvedRefs"), "True"))
	}
	for _, c := range checks {
		harness.Try(t, wait, c)
	}

	// Nothing was refused: no problem, no Forbidden in the log.
	harness.TryGet(t, wait, url(traefik)+"api/problems", harness.StatusIs(http.StatusOK), harness.Cond(func(r *harness.Response) error {
		var probs []map[string]any
		if err := json.Unmarshal([]byte(r.Body), &probs); err != nil {
			return err
		}
		if len(probs) > 0 {
			return fmt.Errorf("problems: %v", probs)
		}
		return nil
	}))
	if out := g.Output(); strings.Contains(strings.ToLower(out), "forbidden") {
		t.Errorf("gantry was refused something:\n%s", out)
	}
}
