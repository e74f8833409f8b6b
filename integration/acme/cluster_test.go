package acme

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// member is one Gantry instance of the cluster test.
type member struct {
	g   *harness.Gantry
	dyn string // its dynamic configuration directory
}

// Several Gantry instances sharing one Consul KV storage and one Pebble:
// each domain is ordered exactly once (Pebble issues one certificate) and
// every instance serves it; the HTTP-01 token is answered by the instance
// Pebble reaches, whichever instance ordered. An instance killed while it
// holds an order's lock loses it when its Consul session expires, and
// another instance then orders and serves the certificate.
func TestClusterSharedStorageOrdersOnce(t *testing.T) {
	consul := harness.StartConsul(t, "gantry-acme-test")
	frontWeb := freePort(t)
	pb := newPebble(t, frontWeb, freePort(t), time.Hour)
	pb.Env = []string{"PEBBLE_VA_SLEEPTIME=3", "PEBBLE_AUTHZREUSE=0", "PEBBLE_WFE_NONCEREJECT=0"}
	pb.Start(t)
	roots := pb.Roots(t)
	be := harness.StartWhoami(t, "app")

	router := func(name, host string) string {
		return fmt.Sprintf(`
    %s:
      rule: Host(`+"`%s`"+`)
      entryPoints: [websecure]
      service: app
      tls: {certResolver: le}
`, name, host)
	}
	dynamic := func(routers ...string) string {
		return "http:\n  routers:" + strings.Join(routers, "") + fmt.Sprintf(`
  services:
    app:
      loadBalancer:
        servers: [{url: "http://%s"}]
`, be)
	}
	start := func(web int) *member {
		dyn := t.TempDir()
		harness.WriteFile(t, dyn, "app.yml", dynamic(router("shared", "shared.test")))
		g := harness.StartWith(t, harness.Options{NoWait: true, Static: fmt.Sprintf(`
entryPoints:
  web: {address: "127.0.0.1:%d"}
  websecure: {address: "127.0.0.1:%d"}
providers:
  file: {directory: %s}
certificatesResolvers:
  le:
    acme:
      email: ops@example.com
      caServer: %s
      caCertificates: [%s]
      storage: consul://%s/gantry/acme
      httpChallenge: {entryPoint: web}
`, web, freePort(t), dyn, pb.DirectoryURL(), pb.CAFile, consul)})
		g.WaitReady(t)
		return &member{g: g, dyn: dyn}
	}
	ms := []*member{start(frontWeb), start(freePort(t)), start(freePort(t))}

	var serial string
	for i, m := range ms {
		harness.Try(t, 90*time.Second, func() error {
			leaf, err := served(m.g.EntryPoints["websecure"], "shared.test", roots)
			if err != nil {
				return err
			}
			s := leaf.SerialNumber.Text(16)
			if serial == "" {
				serial = s
			}
			if s != serial {
				return fmt.Errorf("instance %d serves serial %s, instance 0 %s", i, s, serial)
			}
			return nil
		})
	}
	if n := pb.Issued(); n != 1 {
		t.Errorf("Pebble issued %d certificates for one domain and three instances, want 1", n)
	}

	// Kill the holder mid-order: only instance 1 wants killed.test at
	// first; once it has taken the lock and started ordering it is killed;
	// then instance 2 wants it too and must wait for the dead session.
	b, c := ms[1], ms[2]
	harness.WriteFile(t, b.dyn, "app.yml", dynamic(router("shared", "shared.test"), router("killed", "killed.test")))
	b.g.WaitOutput(t, 60*time.Second, "domains=killed.test")
	if err := b.g.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	harness.WriteFile(t, c.dyn, "app.yml", dynamic(router("shared", "shared.test"), router("killed", "killed.test")))
	harness.Try(t, 90*time.Second, func() error {
		_, err := served(c.g.EntryPoints["websecure"], "killed.test", roots)
		return err
	})
	// "certificate obtained" is logged once the certificate is stored,
	// which is after it serves: wait for the line.
	if err := harness.Poll(60*time.Second, func() error {
		for l := range strings.Lines(c.g.Output()) {
			if strings.Contains(l, "acme: certificate obtained") && strings.Contains(l, "killed.test") {
				return nil
			}
		}
		return fmt.Errorf("no line")
	}); err != nil {
		t.Errorf("instance 2 did not order killed.test itself after the holder died: %v", err)
	}
	t.Logf("takeover after the holder was killed: %v", time.Since(killedAt).Round(time.Second))
}
