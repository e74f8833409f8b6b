package kubecrd

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// The objects the translation's unit tests use (written as Traefik's
// documentation writes them, every kind) are accepted by the API server
// under Gantry's CRDs with kubectl's strict validation, and a misspelt or
// mistyped field is refused naming it: the schema is structural and
// complete.
func schema(t *testing.T, k *harness.Kube) {
	for _, ns := range []string{"apps", "team-b"} {
		k.Kubectl(t, "create", "namespace", ns)
	}
	for _, f := range []string{"http.yaml", "tcp.yaml"} {
		k.Kubectl(t, "apply", "--dry-run=server", "--validate=strict", "-f", filepath.Join("../../providers/kubernetes/crd/testdata", f))
	}
	for _, c := range []struct{ doc, field string }{
		{"stripPrefix: {prefixes: [/x], forceSlashh: true}", "forceSlashh"},
		{"rateLimit: {average: many}", "average"},
	} {
		out, err := k.KubectlIn(fmt.Sprintf("apiVersion: traefik.io/v1alpha1\nkind: Middleware\nmetadata: {name: typo, namespace: apps}\nspec:\n  %s\n", c.doc),
			"apply", "--dry-run=server", "--validate=strict", "-f", "-")
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: accepted or the field not named: %v %s", c.doc, err, out)
		}
	}
}

// writeFile writes data to a new file of the test's temporary directory.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A TraefikService splits over two Services; a MiddlewareTCP allow-list
// closes connections from outside it; a TLSStore's default certificate is
// served for unknown names; a ServersTransport (CA from a Secret, server
// name) reaches an HTTPS backend and a ServersTransportTCP (CA from a
// ConfigMap, watched from then on) a TLS one.
func moreKinds(t *testing.T, k *harness.Kube, g *gantry) {
	ns := k.Namespace(t, "kinds")
	backend(t, k, ns, "blue", 8)
	backend(t, k, ns, "green", 9)

	// An HTTPS backend whose certificate names backend.internal, signed by
	// the test CA.
	crt, key := k.TestCert(t, "backend.internal")
	ip := harness.PodIP(t, 10)
	w := harness.StartWhoamiAt(t, "tlsback", ip, "--name", "tlsback",
		"--cert", writeFile(t, "b.crt", crt), "--key", writeFile(t, "b.key", key))
	_, port, _ := net.SplitHostPort(w.Addr)
	var p int32
	fmt.Sscan(port, &p)
	k.WriteService(t, ns, "tlsback", nil, harness.ServicePort{Name: "https", Port: 443, TargetPort: "https"})
	k.SetEndpoints(t, ns, "tlsback", "tlsback-1", []harness.SlicePort{{Name: "https", Port: p}}, harness.ReadyEndpoint(ip))
	ca, err := os.ReadFile(k.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	dcrt, dkey := k.TestCert(t, "default.example.com")
	k.WriteTLSSecret(t, ns, "default-cert", dcrt, dkey)
	indent := func(b []byte) string { return strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "\n    ") }
	k.Apply(t, fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: backend-ca, namespace: %[1]s}
stringData:
  ca.crt: |
    %[2]s
---
apiVersion: v1
kind: ConfigMap
metadata: {name: backend-ca, namespace: %[1]s}
data:
  ca.crt: |
    %[2]s
---
apiVersion: traefik.io/v1alpha1
kind: TraefikService
metadata: {name: split, namespace: %[1]s}
spec:
  weighted:
    services:
    - {name: blue, port: 80, weight: 1}
    - {name: green, port: 80, weight: 1}
---
apiVersion: traefik.io/v1alpha1
kind: ServersTransport
metadata: {name: internal-ca, namespace: %[1]s}
spec:
  serverName: backend.internal
  rootCAs: [{secret: backend-ca}]
---
apiVersion: traefik.io/v1alpha1
kind: IngressRoute
metadata: {name: kinds, namespace: %[1]s}
spec:
  entryPoints: [web]
  routes:
  - match: Host(`+"`split.example.com`"+`)
    services: [{name: split, kind: TraefikService}]
  - match: Host(`+"`https-backend.example.com`"+`)
    services: [{name: tlsback, port: 443, serversTransport: internal-ca}]
  - match: Host(`+"`unverified.example.com`"+`)
    services: [{name: tlsback, port: 443}]
---
apiVersion: traefik.io/v1alpha1
kind: TLSStore
metadata: {name: default, namespace: %[1]s}
spec:
  defaultCertificate: {secretName: default-cert}
---
apiVersion: traefik.io/v1alpha1
kind: MiddlewareTCP
metadata: {name: lan-only, namespace: %[1]s}
spec:
  ipAllowList: {sourceRange: [10.0.0.0/8]}
---
apiVersion: traefik.io/v1alpha1
kind: ServersTransportTCP
metadata: {name: tcp-ca, namespace: %[1]s}
spec:
  tls:
    serverName: backend.internal
    rootCAs: [{configMap: backend-ca}]
---
apiVersion: traefik.io/v1alpha1
kind: IngressRouteTCP
metadata: {name: guarded, namespace: %[1]s}
spec:
  entryPoints: [tcp2]
  routes:
  - match: HostSNI(`+"`*`"+`)
    middlewares: [{name: lan-only}]
    services: [{name: tlsback, port: 443, tls: true, serversTransport: tcp-ca}]
`, ns, indent(ca)))

	// Weighted: both Services answer.
	seen := map[string]bool{}
	harness.Try(t, timeout, func() error {
		r, err := harness.Get(g.URL(t, "web", "/"), harness.Host("split.example.com"))
		if err != nil {
			return err
		}
		for _, n := range []string{"blue", "green"} {
			if r.StatusCode == 200 && strings.Contains(r.Body, "Name: "+n) {
				seen[n] = true
			}
		}
		if !seen["blue"] || !seen["green"] {
			return fmt.Errorf("answered by %v so far", seen)
		}
		return nil
	})
	// The transport's CA and server name verify the backend; without
	// them the same backend is refused (502).
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("https-backend.example.com"), harness.StatusIs(200), harness.BodyContains("Name: tlsback"))
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("unverified.example.com"), harness.StatusIs(502))
	// TLSStore default: an unknown name gets its certificate.
	want := serialOf(t, dcrt)
	harness.Try(t, timeout, func() error {
		_, serial, err := tlsGet(g.EntryPoints["websecure"], "unknown.example.com", 0)
		if serial != want {
			return fmt.Errorf("default certificate serial %s, want %s (%v)", serial, want, err)
		}
		return nil
	})
	// MiddlewareTCP: the test connects from 127.0.0.1, outside
	// 10.0.0.0/8: the connection is closed without an answer.
	harness.Try(t, timeout, func() error {
		c, err := net.DialTimeout("tcp", g.EntryPoints["tcp2"], 5*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		b, _ := io.ReadAll(c) // EOF or a reset: closed either way
		if len(b) > 0 {
			return fmt.Errorf("answered %q from outside the allow-list", b)
		}
		return nil
	})
	// Same route without the allow-list: the ServersTransportTCP's CA
	// verifies the TLS backend and the bytes go through.
	k.Apply(t, fmt.Sprintf(`
apiVersion: traefik.io/v1alpha1
kind: MiddlewareTCP
metadata: {name: lan-only, namespace: %s}
spec:
  ipAllowList: {sourceRange: [127.0.0.1/32]}
`, ns))
	harness.TryGet(t, timeout, "http://"+g.EntryPoints["tcp2"]+"/", harness.StatusIs(200), harness.BodyContains("Name: tlsback"))
}
