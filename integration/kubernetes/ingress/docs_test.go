package ingress

import (
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// docsManifests are an IngressClass, a Service with a named target port
// and two Ingresses written as Kubernetes' Ingress page and Traefik's
// Kubernetes Ingress routing page write them (the class by name, one
// with Traefik's entrypoints annotation, Prefix and Exact paths).
const docsManifests = `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: traefik
spec:
  controller: traefik.io/ingress-controller
---
apiVersion: v1
kind: Service
metadata:
  name: whoami
spec:
  selector:
    app: whoami
  ports:
    - name: http
      port: 80
      targetPort: web
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: minimal-ingress
spec:
  ingressClassName: traefik
  rules:
  - http:
      paths:
      - path: /testpath
        pathType: Prefix
        backend:
          service:
            name: whoami
            port:
              number: 80
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: myingress
  annotations:
    traefik.ingress.kubernetes.io/router.entrypoints: web
spec:
  ingressClassName: traefik
  rules:
    - host: example.com
      http:
        paths:
          - path: /bar
            pathType: Exact
            backend:
              service:
                name: whoami
                port:
                  name: http
          - path: /foo
            pathType: Exact
            backend:
              service:
                name: whoami
                port:
                  number: 80
`

// TestDocsIngressAppliesUnchanged: manifests as the docs write them are
// served; objects are named as Traefik names them ("@kubernetes"); a
// deleted Ingress answers 404.
func TestDocsIngressAppliesUnchanged(t *testing.T) {
	k := harness.StartKube(t)
	g := startGantry(t, k)
	ip := harness.PodIP(t, 1)
	w := harness.StartWhoamiAt(t, "docs", ip)
	k.Apply(t, docsManifests)
	k.SetEndpoints(t, "default", "whoami", "whoami-abc", slicePorts(t, w), harness.ReadyEndpoint(ip))

	harness.TryGet(t, timeout, g.URL(t, "web", "/testpath"), harness.StatusIs(200), harness.BodyContains("Name: docs"))
	harness.TryGet(t, timeout, g.URL(t, "web", "/testpath/deeper"), harness.StatusIs(200))
	harness.TryGet(t, timeout, g.URL(t, "web", "/bar"), harness.Host("example.com"), harness.StatusIs(200), harness.BodyContains("Name: docs"))
	harness.TryGet(t, timeout, g.URL(t, "web", "/foo"), harness.Host("example.com"), harness.StatusIs(200))
	harness.TryGet(t, timeout, g.URL(t, "web", "/bar/x"), harness.Host("example.com"), harness.StatusIs(404)) // Exact
	// myingress is on web only; minimal-ingress on every entrypoint.
	harness.TryGet(t, timeout, g.URL(t, "websecure", "/bar"), harness.Host("example.com"), harness.StatusIs(404))
	harness.TryGet(t, timeout, g.URL(t, "websecure", "/testpath"), harness.StatusIs(200))
	harness.TryGet(t, timeout, g.URL(t, "traefik", "/api/http/routers"), harness.StatusIs(200),
		harness.BodyContains(`default-myingress-example-com-bar@kubernetes`),
		harness.BodyContains(`default-minimal-ingress-testpath@kubernetes`),
		harness.BodyContains(`"service":"default-whoami-80@kubernetes"`))

	k.Kubectl(t, "delete", "ingress", "myingress")
	harness.TryGet(t, timeout, g.URL(t, "web", "/bar"), harness.Host("example.com"), harness.StatusIs(404))
	harness.TryGet(t, timeout, g.URL(t, "web", "/testpath"), harness.StatusIs(200))
}
