package kubedeploy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// saDir is where a pod finds its service account (token, ca.crt,
// namespace), as kubelet mounts it.
const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// inPod starts gantry as it runs in the example's pod: static
// configuration static, KUBERNETES_SERVICE_HOST/PORT naming the API
// server, and token, ca.crt and namespace at the standard path. The files
// are on a tmpfs over /run that only gantry's own mount namespace sees
// (unshare -m), so the host's /var/run is untouched. No provider option
// and no $KUBECONFIG or $POD_NAMESPACE: everything comes from the pod.
func inPod(t *testing.T, k *harness.Kube, token, static string) *harness.Process {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil || os.Geteuid() != 0 {
		harness.MissingTool(t, "the in-pod test needs root and unshare (util-linux) for a private /var/run")
	}
	if dst, err := os.Readlink("/var/run"); err != nil || strings.Trim(dst, "/") != "run" {
		harness.MissingTool(t, "the in-pod test expects /var/run to be a link to /run")
	}
	files := t.TempDir()
	ca, err := os.ReadFile(k.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, files, "token", token)
	harness.WriteFile(t, files, "ca.crt", string(ca))
	harness.WriteFile(t, files, "namespace", gantryNS)
	cfg := harness.WriteFile(t, t.TempDir(), "gantry.yml", static)
	u, err := url.Parse(k.URL)
	if err != nil {
		t.Fatal(err)
	}
	script := `set -e
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p ` + saDir + `
cp "$1"/token "$1"/ca.crt "$1"/namespace ` + saDir + `/
shift
exec "$@"`
	return harness.StartProcess(t, "gantry", t.TempDir(), "unshare",
		[]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh", files, harness.GantryBin(t), "--configFile=" + cfg},
		[]string{"KUBERNETES_SERVICE_HOST=" + u.Hostname(), "KUBERNETES_SERVICE_PORT=" + u.Port(), "KUBECONFIG=", "POD_NAMESPACE="})
}

// localStatic is the example's static configuration with its entrypoints
// on free loopback ports (web, websecure, traefik), the store in dir, and
// the API on the traefik entrypoint (for /api/problems).
func localStatic(t *testing.T, dir string) (static string, web, websecure, traefik int) {
	t.Helper()
	static = exampleStatic(t)
	web, websecure, traefik = harness.FreePort(t), harness.FreePort(t), harness.FreePort(t)
	for from, port := range map[string]int{`":8000"`: web, `":8443"`: websecure, `":8080"`: traefik} {
		if !strings.Contains(static, "address: "+from) {
			t.Fatalf("the example's configuration has no entrypoint at %s", from)
		}
		static = strings.Replace(static, "address: "+from, fmt.Sprintf(`address: "127.0.0.1:%d"`, port), 1)
	}
	if !strings.Contains(static, "path: /data/gantry.db") {
		t.Fatal("the example's configuration keeps its store elsewhere than /data/gantry.db")
	}
	static = strings.Replace(static, "path: /data/gantry.db", "path: "+filepath.Join(dir, "gantry.db"), 1)
	return static + "api:\n  insecure: true\n", web, websecure, traefik
}

// Gantry in a pod, as the example deploys it: the providers and the ACME
// storage connect with the service account's token from the standard path
// (TokenRequest, bound by the example's RBAC) and KUBERNETES_SERVICE_HOST,
// find their namespace in the service account's namespace file, route an
// Ingress of the example's class and an IngressRoute, and report no
// problem (no Forbidden).
func TestInPod(t *testing.T) {
	k := harness.StartKube(t)
	applyExamples(t, k)
	ip := harness.PodIP(t, 1)
	be := harness.StartWhoamiAt(t, "app", ip)
	_, bePort, _ := strings.Cut(be.Addr, ":")
	port, _ := strconv.Atoi(bePort)
	ns := k.Namespace(t, "app")
	k.WriteService(t, ns, "whoami", nil, harness.ServicePort{Name: "http", Port: 80, TargetPort: "http"})
	k.SetEndpoints(t, ns, "whoami", "whoami-1", []harness.SlicePort{{Name: "http", Port: int32(port)}}, harness.ReadyEndpoint(ip))
	k.Apply(t, fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: app, namespace: %s}
spec:
  ingressClassName: gantry
  rules:
    - host: app.example.test
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service: {name: whoami, port: {name: http}}
---
apiVersion: traefik.io/v1alpha1
kind: IngressRoute
metadata: {name: app, namespace: %s}
spec:
  entryPoints: [web]
  routes:
    - match: Host(`+"`route.example.test`"+`)
      kind: Rule
      services: [{name: whoami, port: 80}]
`, ns, ns))
	token := k.ServiceAccountToken(t, gantryNS, gantrySA)
	static, web, _, traefik := localStatic(t, t.TempDir())
	g := inPod(t, k, token, static)

	client := &http.Client{Timeout: 5 * time.Second}
	for _, host := range []string{"app.example.test", "route.example.test"} { // Ingress, IngressRoute
		harness.Try(t, 2*time.Minute, func() error {
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/", web), nil)
			req.Host = host
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Hostname") {
				return fmt.Errorf("GET %s: %d %q", host, resp.StatusCode, b)
			}
			return nil
		})
	}
	// The ACME storage read its Secret (missing yet: not a problem) in the
	// namespace of the service account file; nothing was refused.
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/api/problems", traefik))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var probs []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&probs); err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Errorf("problem in the pod's configuration: %v", p)
	}
	if out := g.Output(); strings.Contains(strings.ToLower(out), "forbidden") {
		t.Errorf("gantry logged a refusal:\n%s", out)
	}
}
