package acme

import (
	"crypto/tls"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// A certificate resolver added by a live static reload (issue 18): Gantry
// starts without certificatesResolvers, a router asks for resolver "le"
// and gets the generated default certificate; the static
// file then gains "le" (tlsChallenge, against Pebble) without a restart:
// the certificate is obtained and served, verified by a real TLS client.
func TestResolverAddedByStaticReload(t *testing.T) {
	webPort, securePort, apiPort := freePort(t), freePort(t), freePort(t)
	pb := newPebble(t, webPort, securePort, time.Hour)
	pb.Start(t)
	be := harness.StartWhoami(t, "app")
	dir := t.TempDir()
	harness.WriteFile(t, dir, "app.yml", fmt.Sprintf(`
http:
  routers:
    a:
      rule: Host(`+"`a.test`"+`)
      entryPoints: [websecure]
      service: app
      tls:
        certResolver: le
  services:
    app:
      loadBalancer:
        servers: [{url: "http://%s"}]
`, be))
	static := fmt.Sprintf(`
entryPoints:
  websecure:
    address: 127.0.0.1:%d
  traefik:
    address: 127.0.0.1:%d
api:
  insecure: true
providers:
  providersThrottleDuration: 20ms
  file:
    directory: %s
`, securePort, apiPort, dir)
	g := harness.Start(t, static)
	api, secure := g.EntryPoints["traefik"], g.EntryPoints["websecure"]
	harness.TryGet(t, 30*time.Second, "http://"+api+"/api/http/routers/a@file", harness.StatusIs(200))
	c, err := tls.Dial("tcp", secure, &tls.Config{ServerName: "a.test", InsecureSkipVerify: true}) //nolint:gosec // inspects the default certificate
	if err != nil {
		t.Fatal(err)
	}
	if cn := c.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "GANTRY DEFAULT CERT" {
		t.Errorf("without the resolver: served %q, want the generated default", cn)
	}
	c.Close()

	harness.WriteFile(t, filepath.Dir(g.ConfigFile), filepath.Base(g.ConfigFile), static+fmt.Sprintf(`
certificatesResolvers:
  le:
    acme:
      email: ops@example.com
      caServer: %s
      caCertificates: [%s]
      tlsChallenge: {}
`, pb.DirectoryURL(), pb.CAFile))
	g.WaitOutput(t, 30*time.Second, "static configuration reloaded")
	roots := pb.Roots(t)
	harness.Try(t, 60*time.Second, func() error {
		_, err := served(secure, "a.test", roots)
		return err
	})
	var certs []certStatus
	if err := apiGet(api, "/api/tls/certificates", &certs); err != nil {
		t.Fatal(err)
	}
	if len(certs) != 1 || certs[0].Resolver != "le" || certs[0].State != "valid" {
		t.Errorf("/api/tls/certificates: %+v, want one valid certificate of le", certs)
	}
}
