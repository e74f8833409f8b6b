package ingress

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// ing is an Ingress manifest: name, namespace, extra metadata lines
// (labels/annotations, indented 2), class ("" for none), host, path,
// pathType and backend service (port 80).
func ing(name, ns, meta, class, host, path, pathType, svc string) string {
	cls := ""
	if class != "" {
		cls = "  ingressClassName: " + class + "\n"
	}
	return fmt.Sprintf(`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %s
  namespace: %s
%sspec:
%s  rules:
  - host: %s
    http:
      paths:
      - path: %s
        pathType: %s
        backend:
          service:
            name: %s
            port:
              number: 80
`, name, ns, meta, cls, host, path, pathType, svc)
}

// TestProviderOptions runs two gantry instances with different options
// against one cluster and checks what each serves: ingressClass (by
// IngressClass and legacy annotation), labelSelector, namespaces,
// allowEmptyServices, allowExternalNameServices, nativeLBByDefault and
// the nativelb annotation, strictPrefixMatching, throttleDuration, and
// ingressEndpoint ip/hostname written into each served Ingress's status.
func TestProviderOptions(t *testing.T) {
	k := harness.StartKube(t)
	apps, hidden := k.Namespace(t, "apps"), k.Namespace(t, "hidden")
	backend(t, k, apps, "web", "web", harness.PodIP(t, 1))
	onClusterIP := func(name string, svc string) {
		var ann map[string]string
		if svc == "native" {
			ann = map[string]string{"traefik.ingress.kubernetes.io/service.nativelb": "true"}
		}
		s := k.WriteService(t, apps, svc, ann, harness.ServicePort{Name: "http", Port: 80})
		if out, err := exec.Command("ip", "addr", "add", s.Spec.ClusterIP+"/32", "dev", "lo").CombinedOutput(); err != nil {
			t.Fatalf("ip addr add %s: %v %s", s.Spec.ClusterIP, err, out)
		}
		harness.StartWhoamiAt(t, name, s.Spec.ClusterIP, "--addr", s.Spec.ClusterIP+":80")
	}
	// nativeLB: a Service's ClusterIP is put on lo and a whoami listens there.
	onClusterIP("webclusterip", "web")
	onClusterIP("clusterip", "native")
	backend(t, k, hidden, "web", "hiddenweb", harness.PodIP(t, 2))
	// (nativelb off: g2's nativeLBByDefault would send to its ClusterIP)
	k.WriteService(t, apps, "empty", map[string]string{"traefik.ingress.kubernetes.io/service.nativelb": "false"},
		harness.ServicePort{Name: "http", Port: 80})

	// ExternalName to a pod address, where a whoami listens on port 80.
	harness.StartWhoamiAt(t, "external", harness.PodIP(t, 5), "--addr", harness.PodIP(t, 5)+":80")

	k.Apply(t, fmt.Sprintf(`
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: traefik}
spec: {controller: traefik.io/ingress-controller}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: special}
spec: {controller: traefik.io/ingress-controller}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: v1
kind: Service
metadata: {name: ext, namespace: %s}
spec:
  type: ExternalName
  externalName: %s
  ports: [{name: http, port: 80}]
`, apps, harness.PodIP(t, 5))+
		ing("plain", apps, "", "traefik", "plain.test", "/", "Prefix", "web")+
		ing("legacy", apps, "  annotations: {kubernetes.io/ingress.class: traefik}\n", "", "legacy.test", "/", "Prefix", "web")+
		ing("nginx", apps, "", "nginx", "nginx.test", "/", "Prefix", "web")+
		ing("special", apps, "  labels: {team: a}\n", "special", "special.test", "/foo", "Prefix", "web")+
		ing("special-legacy", apps, "  labels: {team: a}\n  annotations: {kubernetes.io/ingress.class: special}\n", "", "speciallegacy.test", "/", "Prefix", "web")+
		ing("special-unlabelled", apps, "", "special", "unlabelled.test", "/", "Prefix", "web")+
		ing("special-hidden", hidden, "  labels: {team: a}\n", "special", "hidden.test", "/", "Prefix", "web")+
		ing("empty", apps, "  labels: {team: a}\n", "special", "empty.test", "/", "Prefix", "empty")+
		ing("empty-default", apps, "", "traefik", "emptydefault.test", "/", "Prefix", "empty")+
		ing("ext", apps, "  labels: {team: a}\n", "special", "ext.test", "/", "Prefix", "ext")+
		ing("ext-default", apps, "", "traefik", "extdefault.test", "/", "Prefix", "ext")+
		ing("native", apps, "", "traefik", "native.test", "/", "Prefix", "native")+
		ing("hidden-default", hidden, "", "traefik", "hiddendefault.test", "/", "Prefix", "web"))

	g1 := startGantry(t, k, "allowExternalNameServices: true")
	g2 := startGantry(t, k, "ingressClass: special", "labelSelector: team=a", fmt.Sprintf("namespaces: [%s]", apps),
		"allowEmptyServices: true", "strictPrefixMatching: true", "nativeLBByDefault: true", "throttleDuration: 1s",
		"ingressEndpoint: {ip: 192.0.2.10, hostname: lb.example.net}")
	get := func(g *harness.Gantry, host, path string, conds ...any) {
		t.Helper()
		harness.TryGet(t, timeout, g.URL(t, "web", path), append([]any{harness.Host(host)}, conds...)...)
	}
	// g1: default options.
	get(g1, "plain.test", "/", harness.StatusIs(200), harness.BodyContains("Name: web"))
	get(g1, "legacy.test", "/", harness.StatusIs(200))
	get(g1, "hiddendefault.test", "/", harness.StatusIs(200), harness.BodyContains("Name: hiddenweb"))
	get(g1, "extdefault.test", "/", harness.StatusIs(200), harness.BodyContains("Name: external"))
	get(g1, "native.test", "/", harness.StatusIs(200), harness.BodyContains("Name: clusterip"))
	get(g1, "nginx.test", "/", harness.StatusIs(404))
	// Without ingressClass every IngressClass of the controller is served.
	get(g1, "special.test", "/foo", harness.StatusIs(200))
	get(g1, "emptydefault.test", "/", harness.StatusIs(404))
	waitProblem(t, g1, "Ingress "+apps+"/empty-default spec.rules[0].http.paths[0].backend.service", "has no ready endpoint")

	// g2: class special, label team=a, namespace apps only, and the rest.
	get(g2, "special.test", "/foo", harness.StatusIs(200), harness.BodyContains("Name: webclusterip")) // nativeLBByDefault
	get(g2, "special.test", "/foo/bar", harness.StatusIs(200))
	get(g2, "special.test", "/foobar", harness.StatusIs(404)) // strictPrefixMatching
	get(g2, "speciallegacy.test", "/", harness.StatusIs(200))
	get(g2, "empty.test", "/", harness.StatusIs(503)) // allowEmptyServices
	get(g2, "unlabelled.test", "/", harness.StatusIs(404))
	get(g2, "hidden.test", "/", harness.StatusIs(404))
	get(g2, "plain.test", "/", harness.StatusIs(404))
	get(g2, "ext.test", "/", harness.StatusIs(404))
	waitProblem(t, g2, "Ingress "+apps+"/ext spec.rules[0].http.paths[0].backend.service", "allowExternalNameServices is false")
	get(g1, "special.test", "/foobar", harness.StatusIs(200)) // without strictPrefixMatching: character-wise prefix

	// ingressEndpoint: every Ingress g2 serves, and only those, gets the status.
	harness.Try(t, timeout, func() error {
		out := k.Kubectl(t, "get", "ingress", "-n", apps, "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.loadBalancer.ingress[0].ip}/{.status.loadBalancer.ingress[0].hostname};{end}`)
		for _, want := range []string{"special=192.0.2.10/lb.example.net", "special-legacy=192.0.2.10/lb.example.net", "empty=192.0.2.10/lb.example.net", ";plain=/;"} {
			if !strings.Contains(";"+out, want) {
				return fmt.Errorf("status %q lacks %q", out, want)
			}
		}
		return nil
	})

	// throttleDuration 1s still routes changes.
	k.Kubectl(t, "label", "ingress", "-n", apps, "special-unlabelled", "team=a")
	get(g2, "unlabelled.test", "/", harness.StatusIs(200))
}

// TestPublishedServiceStatus: ingressEndpoint.publishedService copies the
// external IPs of a ClusterIP Service into the status of the Ingresses
// served.
func TestPublishedServiceStatus(t *testing.T) {
	k := harness.StartKube(t)
	backend(t, k, "default", "web", "web", harness.PodIP(t, 1))
	k.Apply(t, `
apiVersion: v1
kind: Service
metadata: {name: gantry, namespace: default}
spec:
  externalIPs: [192.0.2.77]
  ports: [{name: web, port: 80}]
`+ing("app", "default", "", "", "app.test", "/", "Prefix", "web"))
	g := startGantry(t, k, "ingressEndpoint: {publishedService: default/gantry}")
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("app.test"), harness.StatusIs(200))
	harness.Try(t, timeout, func() error {
		out := k.Kubectl(t, "get", "ingress", "app", "-o", "jsonpath={.status.loadBalancer.ingress[0].ip}:{.status.loadBalancer.ingress[0].ports[0].port}")
		if out != "192.0.2.77:80" {
			return fmt.Errorf("status %q", out)
		}
		return nil
	})
}
