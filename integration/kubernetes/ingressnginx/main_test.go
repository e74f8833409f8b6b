// Package ingressnginx tests providers.kubernetesIngressNGINX and
// `gantry migrate ingress-nginx` through the binary against a real
// kube-apiserver, with backends on pod addresses inside the suite's
// network namespace.
package ingressnginx

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.MainNetns(m) }

// routeTimeout bounds how long a change in the cluster takes to be
// served (informers, build, aggregator debounce).
const routeTimeout = 30 * time.Second

// cluster is a running API server with one gantry watching it.
type cluster struct {
	k   *harness.Kube
	g   *harness.Gantry
	api string // the API entrypoint, "http://127.0.0.1:port"
}

// startCluster starts the API server and gantry with the ingress-nginx
// provider (extra YAML is appended under its section).
func startCluster(t *testing.T, extra string) *cluster {
	t.Helper()
	harness.PodIP(t, 1) // MissingTool outside the network namespace
	k := harness.StartKube(t)
	api := harness.FreeAddr(t)
	static := fmt.Sprintf(`entryPoints:
  web: {address: %q}
  websecure: {address: %q}
  traefik: {address: %q}
api: {insecure: true}
providers:
  kubernetesIngressNGINX:
    endpoint: %q
    token: %q
    certAuthFilePath: %q
%s`, harness.FreeAddr(t), harness.FreeAddr(t), api, k.URL, k.Token, k.CAFile, extra)
	g := harness.Start(t, static)
	return &cluster{k: k, g: g, api: "http://" + api}
}

// backend starts a whoami named name on pod address ip (1..20) and makes
// Service ns/svc (port 80 "http") point at it. More backends of the same
// Service reuse the first one's port on other addresses.
func (c *cluster) backend(t *testing.T, ns, svc string, ips []int, args ...string) []*harness.Whoami {
	t.Helper()
	var ws []*harness.Whoami
	var eps []harness.Endpoint
	port := 0
	for i, ip := range ips {
		addr := harness.PodIP(t, ip)
		name := fmt.Sprintf("%s-%d", svc, i)
		a := args
		if port != 0 {
			a = append(append([]string{}, args...), "--addr", net.JoinHostPort(addr, strconv.Itoa(port)))
		}
		w := harness.StartWhoamiAt(t, name, addr, a...)
		_, p, _ := net.SplitHostPort(w.Addr)
		port, _ = strconv.Atoi(p)
		ws = append(ws, w)
		eps = append(eps, harness.ReadyEndpoint(addr))
	}
	c.k.WriteService(t, ns, svc, nil, harness.ServicePort{Name: "http", Port: 80, TargetPort: strconv.Itoa(port)})
	c.k.SetEndpoints(t, ns, svc, svc+"-1", []harness.SlicePort{{Name: "http", Port: int32(port)}}, eps...)
	return ws
}

// ingress applies an Ingress of class nginx (annotation) in ns with one
// rule host → path (pathType) → svc:80 and the given annotations
// (names without the nginx.ingress.kubernetes.io/ prefix), plus tls
// (a TLS section for host with secret tls, "" none).
func (c *cluster) ingress(t *testing.T, ns, name, host, path, pathType, svc, tls string, ann ...string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %q\n  namespace: %q\n  annotations:\n    kubernetes.io/ingress.class: nginx\n", name, ns)
	for i := 0; i+1 < len(ann); i += 2 {
		fmt.Fprintf(&b, "    nginx.ingress.kubernetes.io/%s: %q\n", ann[i], ann[i+1])
	}
	b.WriteString("spec:\n")
	if tls != "" {
		fmt.Fprintf(&b, "  tls:\n  - hosts: [%q]\n    secretName: %s\n", host, tls)
	}
	fmt.Fprintf(&b, "  rules:\n  - host: %q\n    http:\n      paths:\n      - path: %q\n        pathType: %s\n        backend:\n          service:\n            name: %s\n            port: {name: http}\n",
		host, path, pathType, svc)
	c.k.Apply(t, b.String())
}

// web is the URL of path on the web entrypoint.
func (c *cluster) web(t *testing.T, path string) string { return c.g.URL(t, "web", path) }

// websecure is the HTTPS URL of path on the websecure entrypoint.
func (c *cluster) websecure(t *testing.T, path string) string {
	return "https://" + c.g.EntryPoints["websecure"] + path
}
