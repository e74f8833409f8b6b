package ingress

import (
	"fmt"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestForbiddenThenGranted: with a service-account token that may not
// read Ingresses, /api/problems names the refused request; once a
// ClusterRole allows it, the problem clears and the Ingress (here a
// default backend, the catch-all) is served without a restart.
func TestForbiddenThenGranted(t *testing.T) {
	k := harness.StartKube(t)
	backend(t, k, "default", "web", "web", harness.PodIP(t, 1))
	k.Apply(t, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: fallback, namespace: default}
spec:
  defaultBackend:
    service: {name: web, port: {number: 80}}
`)
	k.Apply(t, `
apiVersion: v1
kind: Namespace
metadata: {name: gantry}
`)
	tok := k.ServiceAccountToken(t, "gantry", "gantry")
	web, api := harness.FreeAddr(t), harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web: {address: %q}
  traefik: {address: %q}
api: {insecure: true}
providers:
  providersThrottleDuration: 50ms
  kubernetesIngress:
    endpoint: %q
    token: %q
    certAuthFilePath: %q
`, web, api, k.URL, tok, k.CAFile))
	waitProblem(t, g, "GET /apis/networking.k8s.io/v1/ingresses", "403")
	harness.TryGet(t, timeout, g.URL(t, "web", "/any/path"), harness.StatusIs(404))

	k.Apply(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: gantry}
rules:
- apiGroups: [""]
  resources: [services, secrets]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
- apiGroups: [networking.k8s.io]
  resources: [ingresses, ingressclasses]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: gantry}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: gantry}
subjects:
- {kind: ServiceAccount, name: gantry, namespace: gantry}
`)
	harness.TryGet(t, timeout, g.URL(t, "web", "/any/path"), harness.StatusIs(200), harness.BodyContains("Name: web"))
	noProblem(t, g, "403")
}
