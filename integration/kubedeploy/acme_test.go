package kubedeploy

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// replica is one Gantry of the shared-storage test.
type replica struct {
	g   *harness.Gantry
	dyn string // its dynamic configuration directory
	api string // address of its traefik entrypoint (API)
}

// served returns the leaf certificate addr presents for sni.
func served(addr, sni string, roots *x509.CertPool) (*x509.Certificate, error) {
	d := &net.Dialer{Timeout: 3 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{ServerName: sni, RootCAs: roots})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0], nil
}

type problem struct {
	Provider, Source, Message string
}

func problems(api string) ([]problem, error) {
	resp, err := http.Get("http://" + api + "/api/problems")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var ps []problem
	return ps, json.NewDecoder(resp.Body).Decode(&ps)
}

// failedAttempts returns, sorted, the attempt numbers of the failed
// orders for domain logged in out.
func failedAttempts(out, domain string) []int {
	var ns []int
	for l := range strings.Lines(out) {
		if !strings.Contains(l, "acme: certificate order failed") || !strings.Contains(l, "domains="+domain+" ") {
			continue
		}
		_, after, ok := strings.Cut(l, " attempt=")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(after, " ")
		if n, err := strconv.Atoi(num); err == nil {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns
}

// lines counts the lines of out holding every one of substrs.
func lines(out string, substrs ...string) int {
	n := 0
	for l := range strings.Lines(out) {
		all := true
		for _, s := range substrs {
			all = all && strings.Contains(l, s)
		}
		if all {
			n++
		}
	}
	return n
}

// waitLines is lines of g's output once at least one line holds every
// substring, or after a minute: "acme: certificate obtained" is logged once
// the certificate is stored, which is after it serves.
func waitLines(g *harness.Gantry, substrs ...string) int {
	n := 0
	_ = harness.Poll(time.Minute, func() error {
		if n = lines(g.Output(), substrs...); n == 0 {
			return fmt.Errorf("no line with %q yet", substrs)
		}
		return nil
	})
	return n
}

// Two replicas sharing the ACME storage kubernetes://gantry/gantry-acme,
// connected with the example's service account token (its RBAC), and one
// Pebble: each certificate is ordered once (Pebble's issued count) and both
// serve it; a failed order is tried once for both replicas per backoff
// step, and both report it; a replica killed while it holds a domain's
// Lease is taken over when the Lease expires; a new replica serves what
// is stored without ordering.
func TestSharedCertificatesAcrossReplicas(t *testing.T) {
	k := harness.StartKube(t)
	applyExamples(t, k)
	token := k.ServiceAccountToken(t, gantryNS, gantrySA)
	kubeconfig := harness.WriteFile(t, t.TempDir(), "kubeconfig", fmt.Sprintf(
		"apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster: {server: %q, certificate-authority: %q}\n"+
			"users:\n- name: gantry\n  user: {token: %q}\ncontexts:\n- name: k\n  context: {cluster: k, user: gantry}\ncurrent-context: k\n",
		k.URL, k.CAFile, token))

	frontWeb := harness.FreePort(t)
	pb := harness.NewPebble(t, frontWeb, harness.FreePort(t), time.Hour)
	pb.BlockDomains(t, "blocked.test")
	pb.Env = []string{"PEBBLE_VA_SLEEPTIME=3", "PEBBLE_AUTHZREUSE=0", "PEBBLE_WFE_NONCEREJECT=0"}
	pb.Start(t)
	roots := pb.Roots(t)
	be := harness.StartWhoami(t, "app")

	dynamic := func(hosts ...string) string {
		var b strings.Builder
		b.WriteString("http:\n  routers:\n")
		for _, h := range hosts {
			fmt.Fprintf(&b, "    %s:\n      rule: Host(`%s`)\n      entryPoints: [websecure]\n      service: app\n      tls: {certResolver: le}\n",
				strings.ReplaceAll(h, ".", "-"), h)
		}
		fmt.Fprintf(&b, "  services:\n    app:\n      loadBalancer:\n        servers: [{url: \"http://%s\"}]\n", be)
		return b.String()
	}
	start := func(web int, hosts ...string) *replica {
		dyn := t.TempDir()
		harness.WriteFile(t, dyn, "app.yml", dynamic(hosts...))
		g := harness.StartWith(t, harness.Options{NoWait: true, Env: []string{"KUBECONFIG=" + kubeconfig}, Static: fmt.Sprintf(`
entryPoints:
  web: {address: "127.0.0.1:%d"}
  websecure: {address: "127.0.0.1:%d"}
  traefik: {address: "127.0.0.1:%d"}
api: {insecure: true}
providers:
  file: {directory: %s}
certificatesResolvers:
  le:
    acme:
      email: ops@example.com
      caServer: %s
      caCertificates: [%s]
      storage: kubernetes://%s/gantry-acme
      httpChallenge: {entryPoint: web}
`, web, harness.FreePort(t), harness.FreePort(t), dyn, pb.DirectoryURL(), pb.CAFile, gantryNS)})
		g.WaitReady(t)
		return &replica{g: g, dyn: dyn, api: g.EntryPoints["traefik"]}
	}
	sameSerial := func(host string, rs ...*replica) string {
		t.Helper()
		var serial string
		for i, r := range rs {
			harness.Try(t, 2*time.Minute, func() error {
				leaf, err := served(r.g.EntryPoints["websecure"], host, roots)
				if err != nil {
					return err
				}
				if s := leaf.SerialNumber.Text(16); serial == "" {
					serial = s
				} else if s != serial {
					return fmt.Errorf("replica %d serves %s with serial %s, replica 0 with %s", i, host, s, serial)
				}
				return nil
			})
		}
		return serial
	}

	// One certificate, both replicas.
	a, b := start(frontWeb, "shared.test"), start(harness.FreePort(t), "shared.test")
	serial := sameSerial("shared.test", a, b)
	if n := pb.Issued(); n != 1 {
		t.Errorf("Pebble issued %d certificates for one domain and two replicas, want 1", n)
	}
	out := a.g.Output() + b.g.Output()
	if n := lines(out, "acme: ordering certificate", "domains=shared.test"); n != 1 {
		t.Errorf("shared.test ordered %d times by the two replicas, want 1", n)
	}
	sec, err := k.Client.CoreV1().Secrets(gantryNS).Get(t.Context(), "gantry-acme", metav1.GetOptions{})
	if err != nil || len(sec.Data["le"]) == 0 {
		t.Fatalf("secret gantry/gantry-acme: %v (keys %d)", err, len(sec.Data))
	}

	// A failed order (Pebble refuses blocked.test) is tried once for both
	// replicas per backoff step, and both report it. Each attempt is
	// logged by the replica that made it with its number, counted across
	// the replicas through the shared store: 1, 2, ... each exactly once
	// (a replica retrying on its own would log a number twice).
	harness.WriteFile(t, a.dyn, "app.yml", dynamic("shared.test", "blocked.test"))
	harness.WriteFile(t, b.dyn, "app.yml", dynamic("shared.test", "blocked.test"))
	for _, r := range []*replica{a, b} {
		harness.Try(t, 2*time.Minute, func() error {
			ps, err := problems(r.api)
			if err != nil {
				return err
			}
			for _, p := range ps {
				if p.Provider == "acme" && strings.Contains(p.Message, "domain blocked.test: certificate order failed (") &&
					strings.Contains(p.Message, "rejectedIdentifier") {
					return nil
				}
			}
			return fmt.Errorf("no failed-order problem for blocked.test yet: %+v", ps)
		})
	}
	// The first retry comes 30 s after the first failure.
	var attempts []int
	harness.Try(t, 3*time.Minute, func() error {
		attempts = failedAttempts(a.g.Output()+b.g.Output(), "blocked.test")
		if len(attempts) < 2 {
			return fmt.Errorf("failed attempts so far: %v", attempts)
		}
		return nil
	})
	out = a.g.Output() + b.g.Output()
	attempts = failedAttempts(out, "blocked.test")
	for i, n := range attempts {
		if n != i+1 {
			t.Fatalf("failed attempts logged by the two replicas: %v, want 1, 2, ... once each", attempts)
		}
	}
	if n := lines(out, "acme: ordering certificate", "domains=blocked.test"); n != len(attempts) && n != len(attempts)+1 {
		t.Errorf("blocked.test ordered %d times for %d failures (at most one more may be running)", n, len(attempts))
	}
	if n := lines(out, "order failed on another instance", "domains=blocked.test"); n == 0 {
		t.Errorf("no replica waited out the other's backoff")
	}

	// b alone orders b.test; Pebble validates on a's web port, and a
	// answers the challenge b published in the shared storage.
	harness.WriteFile(t, b.dyn, "app.yml", dynamic("shared.test", "b.test"))
	harness.Try(t, 2*time.Minute, func() error {
		_, err := served(b.g.EntryPoints["websecure"], "b.test", roots)
		return err
	})
	if waitLines(b.g, "acme: certificate obtained", "domains=b.test") != 1 {
		t.Errorf("replica b did not order b.test itself")
	}

	// Kill the Lease holder mid-order: only b wants killed.test at first;
	// once it orders it is killed; then a wants it too and must wait for
	// the Lease to expire.
	harness.WriteFile(t, b.dyn, "app.yml", dynamic("shared.test", "killed.test"))
	b.g.WaitOutput(t, 2*time.Minute, "domains=killed.test")
	if err := b.g.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	harness.WriteFile(t, a.dyn, "app.yml", dynamic("shared.test", "killed.test"))
	harness.Try(t, 3*time.Minute, func() error {
		_, err := served(a.g.EntryPoints["websecure"], "killed.test", roots)
		return err
	})
	if waitLines(a.g, "acme: certificate obtained", "domains=killed.test") != 1 {
		t.Errorf("replica a did not order killed.test itself after the holder died")
	}
	t.Logf("takeover after the holder was killed: %v", time.Since(killedAt).Round(time.Second))

	// A new replica serves both stored certificates at once, ordering
	// nothing.
	issued := pb.Issued()
	c := start(harness.FreePort(t), "shared.test", "killed.test")
	if s := sameSerial("shared.test", a, c); s != serial {
		t.Errorf("shared.test serial %s after the new replica, want %s", s, serial)
	}
	sameSerial("killed.test", a, c)
	if n := pb.Issued(); n != issued {
		t.Errorf("Pebble issued %d certificates after a third replica started, %d before", n, issued)
	}
	if n := lines(c.g.Output(), "acme: ordering certificate"); n != 0 {
		t.Errorf("the new replica ordered %d certificates, want 0", n)
	}
	sec, err = k.Client.CoreV1().Secrets(gantryNS).Get(t.Context(), "gantry-acme", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var stored struct{ Certificates []json.RawMessage }
	if err := json.Unmarshal(sec.Data["le"], &stored); err != nil {
		t.Fatal(err)
	}
	t.Logf("secret gantry-acme: %d bytes for the account and %d certificates", len(sec.Data["le"]), len(stored.Certificates))
}

// The storage's API server down is a problem in /api/problems naming the
// storage, at start and while running, and the problems end once it is
// back, without a restart.
func TestStorageOutageIsAProblem(t *testing.T) {
	k := harness.StartKube(t)
	applyExamples(t, k)
	token := k.ServiceAccountToken(t, gantryNS, gantrySA)
	kubeconfig := harness.WriteFile(t, t.TempDir(), "kubeconfig", fmt.Sprintf(
		"apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster: {server: %q, certificate-authority: %q}\n"+
			"users:\n- name: gantry\n  user: {token: %q}\ncontexts:\n- name: k\n  context: {cluster: k, user: gantry}\ncurrent-context: k\n",
		k.URL, k.CAFile, token))
	k.StopAPIServer(t)
	g := harness.StartWith(t, harness.Options{Env: []string{"KUBECONFIG=" + kubeconfig}, Static: fmt.Sprintf(`
entryPoints:
  web: {address: "127.0.0.1:%d"}
  traefik: {address: "127.0.0.1:%d"}
api: {insecure: true}
certificatesResolvers:
  le:
    acme:
      email: ops@example.com
      storage: kubernetes://%s/gantry-acme
      httpChallenge: {entryPoint: web}
`, harness.FreePort(t), harness.FreePort(t), gantryNS)})
	api := g.EntryPoints["traefik"]
	storageProblems := func() ([]problem, error) {
		ps, err := problems(api)
		var out []problem
		for _, p := range ps {
			if p.Provider == "acme" && strings.Contains(p.Message, "kubernetes storage gantry/gantry-acme") {
				out = append(out, p)
			}
		}
		return out, err
	}
	harness.Try(t, time.Minute, func() error {
		ps, err := storageProblems()
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Source == "kubernetes://"+gantryNS+"/gantry-acme" && strings.Contains(p.Message, "shared storage: ") {
				return nil
			}
		}
		return fmt.Errorf("no problem naming the storage while its API server is down: %+v", ps)
	})
	k.StartAPIServer(t)
	harness.Try(t, 2*time.Minute, func() error {
		ps, err := storageProblems()
		if err != nil || len(ps) > 0 {
			return fmt.Errorf("storage problems after the API server came back: %+v %v", ps, err)
		}
		return nil
	})
	k.StopAPIServer(t)
	harness.Try(t, 2*time.Minute, func() error {
		ps, err := storageProblems()
		if err != nil || len(ps) == 0 {
			return fmt.Errorf("no storage problem while the API server is down again: %v", err)
		}
		return nil
	})
	k.StartAPIServer(t)
	harness.Try(t, 2*time.Minute, func() error {
		ps, err := storageProblems()
		if err != nil || len(ps) > 0 {
			return fmt.Errorf("storage problems after the second outage: %+v %v", ps, err)
		}
		return nil
	})
}
