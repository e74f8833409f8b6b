package ingressnginx

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// mixed is a cluster's worth of Ingresses: one that moves unchanged, one
// approximated, one refused, a canary, one of another class and one with
// a hostile value.
const mixed = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  namespace: NS
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /$2
    nginx.ingress.kubernetes.io/use-regex: "true"
spec:
  ingressClassName: nginx
  rules:
  - host: shop.test
    http:
      paths:
      - {path: "/api(/|$)(.*)", pathType: ImplementationSpecific, backend: {service: {name: app, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: limited
  namespace: NS
  annotations:
    kubernetes.io/ingress.class: nginx
    nginx.ingress.kubernetes.io/limit-rps: "5"
    nginx.ingress.kubernetes.io/whitelist-source-range: "10.0.0.0/8"
spec:
  rules:
  - host: limited.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: legacy
  namespace: NS
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      more_set_headers "X-Legacy: 1";
    nginx.ingress.kubernetes.io/proxy-buffer-size: 16k
spec:
  ingressClassName: nginx
  rules:
  - host: legacy.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop-canary
  namespace: NS
  annotations:
    nginx.ingress.kubernetes.io/canary: "true"
    nginx.ingress.kubernetes.io/canary-weight: "20"
spec:
  ingressClassName: nginx
  rules:
  - host: shop.test
    http:
      paths:
      - {path: "/api(/|$)(.*)", pathType: ImplementationSpecific, backend: {service: {name: app2, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: elsewhere
  namespace: NS
  annotations:
    kubernetes.io/ingress.class: traefik
    nginx.ingress.kubernetes.io/configuration-snippet: "x"
spec:
  rules:
  - host: other.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: hostile
  namespace: NS
  annotations:
    kubernetes.io/ingress.class: nginx
    nginx.ingress.kubernetes.io/proxy-body-size: "99999999999999999999g"
spec:
  rules:
  - host: hostile.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
`

// TestMigrate runs `gantry migrate ingress-nginx` against a real API
// server with a mixed set of Ingresses, by --kubeconfig and by
// $KUBECONFIG, in text and JSON.
func TestMigrate(t *testing.T) {
	k := harness.StartKube(t)
	ns := k.Namespace(t, "migrate")
	k.WriteService(t, ns, "app", nil, harness.ServicePort{Name: "http", Port: 80})
	k.WriteService(t, ns, "app2", nil, harness.ServicePort{Name: "http", Port: 80})
	k.Apply(t, strings.ReplaceAll(mixed, "NS", ns))

	out, errOut, code := gantry(t, nil, "migrate", "ingress-nginx", "--kubeconfig="+k.Kubeconfig, "--namespace="+ns)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`Ingress NS/shop: served`,
		`rewrite-target +exact`,
		`Ingress NS/limited: served`,
		`limit-rps +approximated +rateLimit`,
		`whitelist-source-range +exact`,
		`Ingress NS/legacy: denied`,
		`configuration-snippet +refused`,
		`proxy-buffer-size +refused +not translated by Gantry`,
		`Ingress NS/shop-canary \(canary\): served`,
		`Ingress NS/hostile: served`,
		`proxy-body-size +refused +"99999999999999999999g" is not an nginx size`,
		`Total: 5 Ingresses \(2 move unchanged, 1 denied\), 9 annotations: 5 exact, 1 approximated, 3 refused`,
	} {
		if !regexp.MustCompile(strings.ReplaceAll(want, "NS", ns)).MatchString(out) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "elsewhere") {
		t.Errorf("an Ingress of another class is listed:\n%s", out)
	}

	jsonOut, errOut, code := gantry(t, []string{"KUBECONFIG=" + k.Kubeconfig}, "migrate", "ingress-nginx", "--output=json")
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, errOut)
	}
	var rep struct {
		Ingresses []struct {
			Namespace, Name, Status string
			Annotations             []struct{ Annotation, Support, Detail string }
		}
		Totals struct{ Ingresses, Exact, Approximated, Refused, Unchanged, Denied int }
	}
	if err := json.Unmarshal([]byte(jsonOut), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, jsonOut)
	}
	if rep.Totals.Ingresses != 5 || rep.Totals.Refused != 3 || rep.Totals.Denied != 1 {
		t.Errorf("totals %+v", rep.Totals)
	}

	// No cluster: a clear error and exit 1; a bad flag: exit 2.
	if _, errOut, code := gantry(t, nil, "migrate", "ingress-nginx", "--kubeconfig=/nonexistent/kubeconfig"); code != 1 || !strings.Contains(errOut, "/nonexistent/kubeconfig") {
		t.Errorf("missing kubeconfig: exit %d, %q", code, errOut)
	}
	if _, _, code := gantry(t, nil, "migrate", "ingress-nginx", "--output=yaml"); code != 2 {
		t.Errorf("bad --output: exit %d", code)
	}
}

// gantry runs the binary with args and extra environment entries.
func gantry(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(harness.GantryBin(t), args...)
	cmd.Env = append(cmd.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}
