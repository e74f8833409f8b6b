package kubecrd

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestCRD runs the provider's end-to-end cases against one API server and
// one gantry (each case in its own namespace).
func TestCRD(t *testing.T) {
	k := harness.StartKube(t)
	g := startGantry(t, k, "")
	// Started before the CRDs exist: a problem names the missing kinds
	// (the stored configuration keeps serving) until they are applied.
	waitProblem(t, g, "API traefik.io/v1alpha1", "not installed", "IngressRoute, IngressRouteTCP")
	applyCRDs(t, k)
	t.Run("SchemaAcceptsTraefikObjectsRefusesTypos", func(t *testing.T) { schema(t, k) })
	t.Run("IngressRouteAsTraefikDocuments", func(t *testing.T) { ingressRouteAsDocumented(t, k, g) })
	t.Run("Middlewares", func(t *testing.T) { middlewares(t, k, g) })
	t.Run("TLSOptionAndSecretReload", func(t *testing.T) { tlsOptionAndSecretReload(t, k, g) })
	t.Run("TCPAndUDP", func(t *testing.T) { tcpAndUDP(t, k, g) })
	t.Run("BadObjectDisablesOnlyItself", func(t *testing.T) { badObject(t, k, g) })
	t.Run("CrossNamespace", func(t *testing.T) { crossNamespace(t, k, g) })
	t.Run("TraefikServiceMiddlewareTCPTLSStoreTransports", func(t *testing.T) { moreKinds(t, k, g) })
	ps, err := problems(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if strings.Contains(p.Source, "traefik.io") {
			t.Errorf("the missing-CRD problem stayed after they were applied: %+v", p)
		}
	}
}

// backend starts a whoami on pod address ip and writes Service name with
// port 80 (named http) and its EndpointSlice in ns.
func backend(t *testing.T, k *harness.Kube, ns, name string, ip int) *harness.Whoami {
	t.Helper()
	w := harness.StartWhoamiAt(t, name, harness.PodIP(t, ip), "--name", name)
	host, port, _ := net.SplitHostPort(w.Addr)
	var p int32
	fmt.Sscan(port, &p)
	k.WriteService(t, ns, name, nil, harness.ServicePort{Name: "http", Port: 80, TargetPort: "http"})
	k.SetEndpoints(t, ns, name, name+"-1", []harness.SlicePort{{Name: "http", Port: p}}, harness.ReadyEndpoint(host))
	return w
}

// An IngressRoute written as Traefik's documentation writes one (kind
// Rule, a Kubernetes Service by port number, entryPoints) applies with
// kubectl unchanged and routes; deleting it is a 404 again.
func ingressRouteAsDocumented(t *testing.T, k *harness.Kube, g *gantry) {
	ns := k.Namespace(t, "docs")
	backend(t, k, ns, "whoami", 1)
	k.Apply(t, fmt.Sprintf(`
apiVersion: traefik.io/v1alpha1
kind: IngressRoute
metadata:
  name: myingressroute
  namespace: %s
spec:
  entryPoints:
    - web
  routes:
  - match: Host(`+"`docs.example.com`"+`) && PathPrefix(`+"`/bar`"+`)
    kind: Rule
    priority: 12
    services:
    - name: whoami
      port: 80
`, ns))
	url := g.URL(t, "web", "/bar/x")
	harness.TryGet(t, timeout, url, harness.Host("docs.example.com"), harness.StatusIs(200), harness.BodyContains("Name: whoami"))
	harness.TryGet(t, timeout, g.URL(t, "web", "/other"), harness.Host("docs.example.com"), harness.StatusIs(404))
	k.Kubectl(t, "delete", "-n", ns, "ingressroute", "myingressroute")
	harness.TryGet(t, timeout, url, harness.Host("docs.example.com"), harness.StatusIs(404))
}

// Middlewares apply in order, a basicAuth reads its users from a Secret,
// and a Secret change is seen without a restart.
func middlewares(t *testing.T, k *harness.Kube, g *gantry) {
	ns := k.Namespace(t, "mw")
	backend(t, k, ns, "api", 2)
	// Users as "{SHA}" hashes: alice:pw1, later alice:pw2.
	k.Apply(t, fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: users, namespace: %[1]s}
stringData:
  users: "alice:{SHA}AsWT/Zr4JUuFnUJqdrbNQoR/vsE="
---
apiVersion: traefik.io/v1alpha1
kind: Middleware
metadata: {name: strip, namespace: %[1]s}
spec:
  stripPrefix: {prefixes: [/api]}
---
apiVersion: traefik.io/v1alpha1
kind: Middleware
metadata: {name: stamp, namespace: %[1]s}
spec:
  headers:
    customRequestHeaders: {X-Through: gantry}
---
apiVersion: traefik.io/v1alpha1
kind: Middleware
metadata: {name: auth, namespace: %[1]s}
spec:
  basicAuth: {secret: users}
---
apiVersion: traefik.io/v1alpha1
kind: IngressRoute
metadata: {name: api, namespace: %[1]s}
spec:
  entryPoints: [web]
  routes:
  - match: Host(`+"`mw.example.com`"+`)
    middlewares: [{name: auth}, {name: strip}, {name: stamp}]
    services: [{name: api, port: http}]
`, ns))
	url := g.URL(t, "web", "/api/hello")
	harness.TryGet(t, timeout, url, harness.Host("mw.example.com"), harness.StatusIs(401))
	ok := func(user, pass string) harness.ReqOption {
		return func(r *http.Request) { r.SetBasicAuth(user, pass) }
	}
	harness.TryGet(t, timeout, url, harness.Host("mw.example.com"), ok("alice", "pw1"), harness.StatusIs(200),
		harness.BodyContains("GET /hello HTTP/1.1"), harness.BodyContains("X-Through: gantry"))
	k.Apply(t, fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: users, namespace: %s}
stringData:
  users: "alice:{SHA}8Wyi36Noi/CMek4hVErxW9WYy3A="
`, ns))
	harness.TryGet(t, timeout, url, harness.Host("mw.example.com"), ok("alice", "pw2"), harness.StatusIs(200))
	harness.TryGet(t, timeout, url, harness.Host("mw.example.com"), ok("alice", "pw1"), harness.StatusIs(401))
}

// A TLSOption is enforced on the routes naming it, and a changed
// certificate Secret is served without a restart.
func tlsOptionAndSecretReload(t *testing.T, k *harness.Kube, g *gantry) {
	ns := k.Namespace(t, "tls")
	backend(t, k, ns, "secure", 3)
	crt, key := k.TestCert(t, "tls.example.com")
	k.WriteTLSSecret(t, ns, "cert", crt, key)
	k.Apply(t, fmt.Sprintf(`
apiVersion: traefik.io/v1alpha1
kind: TLSOption
metadata: {name: modern, namespace: %[1]s}
spec:
  minVersion: VersionTLS13
---
apiVersion: traefik.io/v1alpha1
kind: IngressRoute
metadata: {name: secure, namespace: %[1]s}
spec:
  entryPoints: [websecure]
  routes:
  - match: Host(`+"`tls.example.com`"+`)
    services: [{name: secure, port: 80}]
  tls:
    secretName: cert
    options: {name: modern}
`, ns))
	addr := g.EntryPoints["websecure"]
	var first string
	harness.Try(t, timeout, func() error {
		code, serial, err := tlsGet(addr, "tls.example.com", 0)
		if err != nil || code != 200 {
			return fmt.Errorf("status %d, %v", code, err)
		}
		first = serial
		return nil
	})
	// TLS 1.2 is refused by the route's TLSOption.
	if _, _, err := tlsGet(addr, "tls.example.com", tls.VersionTLS12); err == nil {
		t.Error("a TLS 1.2 handshake succeeded on a route whose TLSOption says minVersion VersionTLS13")
	}
	crt2, key2 := k.TestCert(t, "tls.example.com")
	k.WriteTLSSecret(t, ns, "cert", crt2, key2)
	harness.Try(t, timeout, func() error {
		code, serial, err := tlsGet(addr, "tls.example.com", 0)
		if err != nil || code != 200 || serial == first {
			return fmt.Errorf("status %d serial %s (first %s): %v", code, serial, first, err)
		}
		return nil
	})
}

// An IngressRouteTCP (HostSNI(*), a whoami spoken to over plain TCP) and
// an IngressRouteUDP route to their Services.
func tcpAndUDP(t *testing.T, k *harness.Kube, g *gantry) {
	ns := k.Namespace(t, "l4")
	backend(t, k, ns, "raw", 4)
	ip := harness.PodIP(t, 5)
	pc, err := net.ListenPacket("udp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { pc.Close(); <-done })
	go func() { // echo "<payload>" back as "echo:<payload>"
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(append([]byte("echo:"), buf[:n]...), from)
		}
	}()
	udpPort := int32(pc.LocalAddr().(*net.UDPAddr).Port)
	k.WriteService(t, ns, "echo", nil, harness.ServicePort{Name: "dns", Port: 53, TargetPort: "dns"})
	k.SetEndpoints(t, ns, "echo", "echo-1", []harness.SlicePort{{Name: "dns", Port: udpPort}}, harness.ReadyEndpoint(ip))
	k.Apply(t, fmt.Sprintf(`
apiVersion: traefik.io/v1alpha1
kind: IngressRouteTCP
metadata: {name: raw, namespace: %[1]s}
spec:
  entryPoints: [tcp]
  routes:
  - match: HostSNI(`+"`*`"+`)
    services: [{name: raw, port: 80}]
---
apiVersion: traefik.io/v1alpha1
kind: IngressRouteUDP
metadata: {name: echo, namespace: %[1]s}
spec:
  entryPoints: [udp]
  routes:
  - services: [{name: echo, port: 53}]
`, ns))
	harness.TryGet(t, timeout, "http://"+g.EntryPoints["tcp"]+"/", harness.StatusIs(200), harness.BodyContains("Name: raw"))
	harness.Try(t, timeout, func() error {
		c, err := net.Dial("udp", g.UDP)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		if err != nil {
			return err
		}
		if got := string(buf[:n]); got != "echo:ping" {
			return fmt.Errorf("udp answer %q", got)
		}
		return nil
	})
}

// A Middleware whose Secret is missing is a problem naming it; the route
// using it is disabled (never served without its auth), another route of
// the same namespace keeps routing. Once the Secret exists, it routes.
func badObject(t *testing.T, k *harness.Kube, g *gantry) {
	ns := k.Namespace(t, "bad")
	backend(t, k, ns, "app", 6)
	k.Apply(t, fmt.Sprintf(`
apiVersion: traefik.io/v1alpha1
kind: Middleware
metadata: {name: locked, namespace: %[1]s}
spec:
  basicAuth: {secret: not-yet}
---
apiVersion: traefik.io/v1alpha1
kind: IngressRoute
metadata: {name: app, namespace: %[1]s}
spec:
  entryPoints: [web]
  routes:
  - match: Host(`+"`locked.example.com`"+`)
    middlewares: [{name: locked}]
    services: [{name: app, port: 80}]
  - match: Host(`+"`open.example.com`"+`)
    services: [{name: app, port: 80}]
`, ns))
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("open.example.com"), harness.StatusIs(200))
	waitProblem(t, g, "Middleware "+ns+"/locked", "spec.basicAuth.secret", "not found")
	for range 3 {
		r, err := harness.Get(g.URL(t, "web", "/"), harness.Host("locked.example.com"))
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode == 200 {
			t.Fatalf("route whose auth middleware is broken answered 200:\n%s", r.Body)
		}
	}
	k.Apply(t, fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: not-yet, namespace: %s}
stringData:
  users: "alice:{SHA}AsWT/Zr4JUuFnUJqdrbNQoR/vsE="
`, ns))
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("locked.example.com"), harness.StatusIs(401))
}

// A reference to a Middleware of another namespace is refused, with a
// problem naming the IngressRoute, the field and the option, until a
// gantry runs with allowCrossNamespace.
func crossNamespace(t *testing.T, k *harness.Kube, g *gantry) {
	shared := k.Namespace(t, "shared")
	team := k.Namespace(t, "team")
	backend(t, k, team, "site", 7)
	k.Apply(t, fmt.Sprintf(`
apiVersion: traefik.io/v1alpha1
kind: Middleware
metadata: {name: stamp, namespace: %[1]s}
spec:
  headers:
    customRequestHeaders: {X-Shared: "yes"}
---
apiVersion: traefik.io/v1alpha1
kind: IngressRoute
metadata: {name: site, namespace: %[2]s}
spec:
  entryPoints: [web]
  routes:
  - match: Host(`+"`site.example.com`"+`)
    middlewares: [{name: stamp, namespace: %[1]s}]
    services: [{name: site, port: 80}]
`, shared, team))
	waitProblem(t, g, "IngressRoute "+team+"/site", "spec.routes[0].middlewares[0]", shared+"/stamp", "allowCrossNamespace")
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("site.example.com"), harness.StatusIs(404))

	g2 := startGantry(t, k, "    allowCrossNamespace: true\n")
	harness.TryGet(t, timeout, g2.URL(t, "web", "/"), harness.Host("site.example.com"), harness.StatusIs(200), harness.BodyContains("X-Shared: yes"))
	ps, err := problems(g2)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if strings.Contains(p.Source, team+"/site") {
			t.Errorf("problem with allowCrossNamespace: %+v", p)
		}
	}
}
