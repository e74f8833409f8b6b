package kubedeploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gantry-proxy/gantry/integration/harness"
	"go.yaml.in/yaml/v3"
)

// examplesDir is the repository's examples/kubernetes, applied as the
// README says.
const examplesDir = "../../examples/kubernetes"

// gantryNS and gantrySA are the example's namespace and service account.
const (
	gantryNS = "gantry"
	gantrySA = "gantry"
)

// applyExamples applies the CRDs (examples/kubernetes/crds, when there)
// and then the directory itself, as the README's install does, with
// server-side strict field validation.
func applyExamples(t *testing.T, k *harness.Kube) {
	t.Helper()
	crds := filepath.Join(examplesDir, "crds")
	if ents, _ := os.ReadDir(crds); len(ents) > 0 {
		k.Kubectl(t, "apply", "--server-side", "-f", crds)
		k.Kubectl(t, "wait", "--for", "condition=established", "--timeout", "120s", "crd", "--all")
	}
	out := k.Kubectl(t, "apply", "--validate=strict", "-f", examplesDir)
	t.Logf("kubectl apply -f examples/kubernetes:\n%s", out)
}

// manifest returns the object of kind named name in the example files.
func manifest(t *testing.T, kind, name string) map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", examplesDir, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		for {
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				break
			}
			if obj["kind"] == kind && dig(obj, "metadata", "name") == name {
				return obj
			}
		}
	}
	t.Fatalf("no %s %s in %s", kind, name, examplesDir)
	return nil
}

// dig follows keys (string: map key, int: list index) into v.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// exampleStatic is the static configuration in the example's ConfigMap.
func exampleStatic(t *testing.T) string {
	t.Helper()
	s, _ := dig(manifest(t, "ConfigMap", "gantry"), "data", "gantry.yml").(string)
	if s == "" {
		t.Fatal("ConfigMap gantry has no gantry.yml")
	}
	return s
}

// examples/kubernetes applies with kubectl against a real API server, and
// what it deploys is consistent: two replicas, readiness on /ping at the
// port of the ping entrypoint, and a termination grace period that covers
// the preStop sleep plus Gantry's whole drain (graceTimeOut + its shutdown
// margin + the telemetry flush), so SIGKILL never cuts a request short.
func TestExamplesApply(t *testing.T) {
	k := harness.StartKube(t)
	applyExamples(t, k)
	ctx := t.Context()
	dep, err := k.Client.AppsV1().Deployments(gantryNS).Get(ctx, "gantry", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("deployment gantry/gantry after apply: %v", err)
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2", dep.Spec.Replicas)
	}
	pod := dep.Spec.Template.Spec
	if pod.ServiceAccountName != gantrySA {
		t.Errorf("serviceAccountName %q", pod.ServiceAccountName)
	}
	c := pod.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/ping" {
		t.Fatalf("readiness probe %+v, want GET /ping", c.ReadinessProbe)
	}
	pingPort := -1
	for _, p := range c.Ports {
		if p.Name == c.ReadinessProbe.HTTPGet.Port.String() {
			pingPort = int(p.ContainerPort)
		}
	}

	var static struct {
		EntryPoints map[string]struct {
			Address   string `yaml:"address"`
			Transport struct {
				LifeCycle struct {
					GraceTimeOut              string `yaml:"graceTimeOut"`
					RequestAcceptGraceTimeout string `yaml:"requestAcceptGraceTimeout"`
				} `yaml:"lifeCycle"`
			} `yaml:"transport"`
		} `yaml:"entryPoints"`
		Ping *struct {
			EntryPoint string `yaml:"entryPoint"`
		} `yaml:"ping"`
	}
	if err := yaml.Unmarshal([]byte(exampleStatic(t)), &static); err != nil {
		t.Fatal(err)
	}
	if static.Ping == nil {
		t.Fatal("the example's configuration does not enable ping")
	}
	pingEP := static.Ping.EntryPoint
	if pingEP == "" {
		pingEP = "traefik"
	}
	if want := fmt.Sprintf(":%d", pingPort); static.EntryPoints[pingEP].Address != want {
		t.Errorf("readiness probe port %d, but the ping entrypoint %s listens on %q", pingPort, pingEP, static.EntryPoints[pingEP].Address)
	}
	drain := time.Duration(0)
	for name, ep := range static.EntryPoints {
		g, a := 10*time.Second, time.Duration(0) // Gantry's defaults
		var err error
		if s := ep.Transport.LifeCycle.GraceTimeOut; s != "" {
			if g, err = time.ParseDuration(s); err != nil {
				t.Fatalf("entrypoint %s graceTimeOut: %v", name, err)
			}
		}
		if s := ep.Transport.LifeCycle.RequestAcceptGraceTimeout; s != "" {
			if a, err = time.ParseDuration(s); err != nil {
				t.Fatalf("entrypoint %s requestAcceptGraceTimeout: %v", name, err)
			}
		}
		drain = max(drain, g+a)
	}
	const shutdownMargin, flush = 5 * time.Second, 5 * time.Second // cmd/gantry's
	preStop := time.Duration(0)
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Fatal("no preStop sleep: endpoints would still send new connections to a stopping pod")
	}
	preStop = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	need := preStop + drain + shutdownMargin + flush
	if pod.TerminationGracePeriodSeconds == nil || time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second < need {
		t.Errorf("terminationGracePeriodSeconds %v, want at least %v (preStop %v + drain %v + margin %v + flush %v)",
			pod.TerminationGracePeriodSeconds, need, preStop, drain, shutdownMargin, flush)
	}

	ic, err := k.Client.NetworkingV1().IngressClasses().Get(ctx, "gantry", metav1.GetOptions{})
	if err != nil || ic.Spec.Controller != "traefik.io/ingress-controller" {
		t.Errorf("ingressclass gantry: %+v %v", ic, err)
	}
	if _, err := k.Client.CoreV1().Services(gantryNS).Get(ctx, "gantry", metav1.GetOptions{}); err != nil {
		t.Errorf("service gantry/gantry: %v", err)
	}
	if _, err := k.Client.PolicyV1().PodDisruptionBudgets(gantryNS).Get(ctx, "gantry", metav1.GetOptions{}); err != nil {
		t.Errorf("poddisruptionbudget gantry/gantry: %v", err)
	}
	// Applying again (an upgrade) is accepted.
	k.Kubectl(t, "apply", "--validate=strict", "-f", examplesDir)
}

// The example's RBAC is enough and no more: a token of its service
// account (TokenRequest) lists and watches everything the providers and the
// ACME storage use, and is refused everything else that matters.
func TestExampleRBAC(t *testing.T) {
	k := harness.StartKube(t)
	applyExamples(t, k)
	token := k.ServiceAccountToken(t, gantryNS, gantrySA)
	cfg := &rest.Config{Host: k.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: k.CAFile}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	// Real requests with the token.
	if _, err := cs.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list endpointslices: %v", err)
	}
	if _, err := cs.NetworkingV1().Ingresses("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list ingresses: %v", err)
	}
	if _, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list pods: %v, want Forbidden", err)
	}
	if err := cs.CoreV1().Services(gantryNS).Delete(ctx, "gantry", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("delete service gantry/gantry: %v, want Forbidden", err)
	}

	type access struct {
		verb, group, resource, sub, ns string
	}
	allowed := []access{
		{"list", "", "services", "", ""}, {"watch", "", "services", "", ""},
		{"list", "", "secrets", "", ""}, {"watch", "", "secrets", "", ""},
		{"list", "", "configmaps", "", ""}, {"watch", "", "configmaps", "", ""},
		{"list", "", "namespaces", "", ""}, {"watch", "", "namespaces", "", ""},
		{"list", "discovery.k8s.io", "endpointslices", "", ""}, {"watch", "discovery.k8s.io", "endpointslices", "", ""},
		{"list", "networking.k8s.io", "ingresses", "", ""}, {"watch", "networking.k8s.io", "ingresses", "", ""},
		{"list", "networking.k8s.io", "ingressclasses", "", ""}, {"watch", "networking.k8s.io", "ingressclasses", "", ""},
		{"update", "networking.k8s.io", "ingresses", "status", "default"},
		// The ACME storage, in Gantry's namespace.
		{"get", "", "secrets", "", gantryNS}, {"create", "", "secrets", "", gantryNS},
		{"update", "", "secrets", "", gantryNS}, {"delete", "", "secrets", "", gantryNS},
		{"get", "coordination.k8s.io", "leases", "", gantryNS}, {"create", "coordination.k8s.io", "leases", "", gantryNS},
		{"update", "coordination.k8s.io", "leases", "", gantryNS},
	}
	for _, r := range []string{"ingressroutes", "ingressroutetcps", "ingressrouteudps", "middlewares", "middlewaretcps",
		"traefikservices", "tlsoptions", "tlsstores", "serverstransports", "serverstransporttcps"} {
		allowed = append(allowed, access{"list", "traefik.io", r, "", ""}, access{"watch", "traefik.io", r, "", ""})
	}
	for _, r := range []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes", "referencegrants"} {
		allowed = append(allowed, access{"list", "gateway.networking.k8s.io", r, "", ""}, access{"watch", "gateway.networking.k8s.io", r, "", ""})
		if r != "referencegrants" {
			allowed = append(allowed, access{"update", "gateway.networking.k8s.io", r, "status", "default"})
		}
	}
	denied := []access{
		{"get", "", "secrets", "", "default"}, {"create", "", "secrets", "", "default"},
		{"update", "", "secrets", "", "kube-system"}, {"delete", "", "secrets", "", "default"},
		{"create", "", "services", "", gantryNS}, {"update", "", "services", "", "default"},
		{"list", "", "pods", "", ""}, {"create", "", "pods", "", gantryNS}, {"create", "", "pods", "exec", gantryNS},
		{"update", "", "configmaps", "", gantryNS}, {"list", "", "nodes", "", ""}, {"update", "", "namespaces", "", ""},
		{"update", "networking.k8s.io", "ingresses", "", "default"}, {"delete", "networking.k8s.io", "ingresses", "", "default"},
		{"create", "discovery.k8s.io", "endpointslices", "", "default"},
		{"create", "coordination.k8s.io", "leases", "", "kube-system"}, {"update", "coordination.k8s.io", "leases", "", "default"},
		{"delete", "coordination.k8s.io", "leases", "", gantryNS},
		{"create", "traefik.io", "ingressroutes", "", "default"},
		{"update", "gateway.networking.k8s.io", "gateways", "", "default"}, {"update", "gateway.networking.k8s.io", "httproutes", "", "default"},
		{"create", "gateway.networking.k8s.io", "referencegrants", "", "default"}, {"update", "gateway.networking.k8s.io", "gatewayclasses", "", ""},
		{"create", "", "serviceaccounts", "token", gantryNS},
		{"create", "rbac.authorization.k8s.io", "rolebindings", "", gantryNS},
		{"escalate", "rbac.authorization.k8s.io", "clusterroles", "", ""},
		{"impersonate", "", "users", "", ""},
	}
	check := func(a access, want bool) {
		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.sub, Namespace: a.ns,
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("access review %+v: %v", a, err)
		}
		if r.Status.Allowed != want {
			t.Errorf("%s %s/%s %s in namespace %q: allowed=%v, want %v", a.verb, a.group, a.resource, a.sub, a.ns, r.Status.Allowed, want)
		}
	}
	for _, a := range allowed {
		check(a, true)
	}
	for _, a := range denied {
		check(a, false)
	}
}
