package kubegateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.MainNetns(m) }

// env is one API server with the Gateway API CRDs and one gantry
// serving its Gateways.
type env struct {
	k  *harness.Kube
	g  *harness.Gantry
	gw gwclient.Interface
	ip string // Gantry's address (statusAddress.ip)
}

// crdDir is the standard-channel CRDs shipped in the gateway-api module.
func crdDir(t *testing.T) string {
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

// start brings up the API server with the CRDs and a gantry whose
// kubernetesGateway provider has extra (YAML lines indented for the
// provider's block) appended to its options.
func start(t *testing.T, extra string) *env {
	t.Helper()
	ip := harness.PodIP(t, 1)
	k := harness.StartKube(t)
	k.Kubectl(t, "apply", "--server-side", "-f", crdDir(t))
	k.Kubectl(t, "wait", "--for", "condition=established", "--timeout", "60s", "crd", "--all")
	gw, err := gwclient.NewForConfig(k.Config)
	if err != nil {
		t.Fatal(err)
	}
	static := fmt.Sprintf(`
entryPoints:
  web:
    address: ":80"
  websecure:
    address: ":443"
  alt:
    address: ":8080"
  alt2:
    address: ":8090"
providers:
  providersThrottleDuration: 10ms
  kubernetesGateway:
    endpoint: %q
    token: %q
    certAuthFilePath: %q
    statusAddress:
      ip: %q
%s`, k.URL, k.Token, k.CAFile, ip, extra)
	g := harness.Start(t, static)
	return &env{k: k, g: g, gw: gw, ip: ip}
}

// url is http://<Gantry's address>:port + path.
func (e *env) url(port int, path string) string {
	return fmt.Sprintf("http://%s:%d%s", e.ip, port, path)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// gatewayClass creates the GatewayClass "gantry" of Traefik's controller.
func (e *env) gatewayClass(t *testing.T) {
	t.Helper()
	e.k.Apply(t, `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: gantry
spec:
  controllerName: traefik.io/gateway-controller
`)
}

// routeCond returns the condition typ of our parent entry of HTTPRoute
// ns/name ("" when absent).
func (e *env) routeCond(t *testing.T, ns, name, typ string) (metav1.Condition, error) {
	r, err := e.gw.GatewayV1().HTTPRoutes(ns).Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		return metav1.Condition{}, err
	}
	for _, p := range r.Status.Parents {
		if p.ControllerName != "traefik.io/gateway-controller" {
			continue
		}
		for _, c := range p.Conditions {
			if c.Type == typ {
				return c, nil
			}
		}
	}
	return metav1.Condition{}, fmt.Errorf("HTTPRoute %s/%s has no %s condition of ours: %+v", ns, name, typ, r.Status.Parents)
}

// waitRouteCond waits until HTTPRoute ns/name has condition typ with
// status and reason.
func (e *env) waitRouteCond(t *testing.T, ns, name, typ string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	harness.Try(t, 60*time.Second, func() error {
		c, err := e.routeCond(t, ns, name, typ)
		if err != nil {
			return err
		}
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("%s = %s/%s (%s), want %s/%s", typ, c.Status, c.Reason, c.Message, status, reason)
		}
		return nil
	})
}

// gateway returns Gateway ns/name.
func (e *env) gateway(t *testing.T, ns, name string) *gwv1.Gateway {
	t.Helper()
	g, err := e.gw.GatewayV1().Gateways(ns).Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func hasCond(cs []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) bool {
	for _, c := range cs {
		if c.Type == typ {
			return c.Status == status && c.Reason == reason
		}
	}
	return false
}

func lines(s ...string) string { return strings.Join(s, "\n") + "\n" }
