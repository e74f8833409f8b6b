package acme

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Issue 23, through the binary: a CA that forgot Gantry's account (here
// Pebble restarted: it keeps accounts in memory) answers the next order
// with accountDoesNotExist. Gantry registers its key again and the order
// succeeds; before, it retried the dead account forever. acme.json holds
// the new registration.
func TestForgottenAccountRegisteredAgain(t *testing.T) {
	securePort, apiPort := freePort(t), freePort(t)
	pb := newPebble(t, freePort(t), securePort, time.Hour)
	pb.Start(t)
	dir := t.TempDir()
	router := func(name string) string {
		return fmt.Sprintf("http:\n  routers:\n    %s:\n      rule: Host(`%s.test`)\n      service: noop@internal\n      tls: {certResolver: alpn}\n", name, name)
	}
	harness.WriteFile(t, dir, "a.yml", router("a"))
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  websecure: {address: "127.0.0.1:%d"}
  traefik: {address: "127.0.0.1:%d"}
api: {insecure: true}
providers:
  file: {directory: %s}
certificatesResolvers:
  alpn:
    acme:
      caServer: %s
      caCertificates: [%s]
      storage: acme.json
      tlsChallenge: {}
`, securePort, apiPort, dir, pb.DirectoryURL(), pb.CAFile))
	secure := g.EntryPoints["websecure"]
	roots := pb.Roots(t)
	harness.Try(t, 60*time.Second, func() error { _, err := served(secure, "a.test", roots); return err })
	storage := filepath.Join(g.Dir, "acme.json")
	before := accountURI(t, storage)

	pb.Restart(t) // the CA forgets every account
	roots = pb.Roots(t)
	harness.WriteFile(t, dir, "c.yml", router("c"))
	harness.Try(t, 90*time.Second, func() error { _, err := served(secure, "c.test", roots); return err })
	if !strings.Contains(g.Output(), "registering it again") {
		t.Errorf("no log line for the re-registration:\n%s", g.Output())
	}
	harness.Try(t, 60*time.Second, func() error {
		if after := accountURI(t, storage); after == "" || after == before {
			return fmt.Errorf("acme.json account %q, want a new registration (was %q)", after, before)
		}
		return nil
	})
}

// accountURI reads the registration URI of the alpn resolver's account in
// a Traefik-format acme.json.
func accountURI(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]struct {
		Account *struct {
			Registration *struct{ URI string } `json:"Registration"`
		} `json:"Account"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if a := d["alpn"].Account; a != nil && a.Registration != nil {
		return a.Registration.URI
	}
	return ""
}
