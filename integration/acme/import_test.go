package acme

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// A Traefik acme.json (its documented layout: per resolver an Account with
// Traefik's PKCS#1 RSA key and registration, Certificates with base64 PEM)
// is imported on first start and its certificate served at once, with no
// order (the CA is unreachable: an order would fail loudly); after a
// restart without the file, the store still serves it.
func TestTraefikACMEJSONImported(t *testing.T) {
	dir := t.TempDir()
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	cert, key, serial := keyPair(t, "migrated.test")
	doc := map[string]any{"le": map[string]any{
		"Account": map[string]any{
			"Email":        "ops@example.com",
			"Registration": map[string]any{"body": map[string]any{"status": "valid"}, "uri": "https://127.0.0.1:1/acme/acct/1"},
			"PrivateKey":   x509.MarshalPKCS1PrivateKey(rk),
			"KeyType":      "4096",
		},
		"Certificates": []any{map[string]any{"domain": map[string]any{"main": "migrated.test"}, "certificate": cert, "key": key, "Store": "default"}},
	}}
	b, _ := json.Marshal(doc)
	acmeJSON := filepath.Join(dir, "acme.json")
	if err := os.WriteFile(acmeJSON, b, 0o644); err != nil { // as some users have it
		t.Fatal(err)
	}
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "r.yml", "http:\n  routers:\n    m:\n      rule: Host(`migrated.test`)\n      service: noop@internal\n      tls: {certResolver: le}\n")
	static := fmt.Sprintf(`
entryPoints:
  websecure: {address: "127.0.0.1:%d"}
providers:
  file: {directory: %s}
certificatesResolvers:
  le:
    acme:
      caServer: https://127.0.0.1:1/dir
      storage: %s
      tlsChallenge: {}
`, freePort(t), dyn, acmeJSON)
	work := t.TempDir()
	g := harness.StartWith(t, harness.Options{Static: static, Dir: work})
	waitSerial(t, g.EntryPoints["websecure"], "migrated.test", serial, "imported")
	out := g.WaitOutput(t, 60*time.Second, "acme: imported Traefik storage")
	if strings.Contains(out, "ordering certificate") {
		t.Errorf("an order was started for an imported valid certificate")
	}
	if st, err := os.Stat(acmeJSON); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("acme.json after import: %v, mode %v; want 0600 (it holds private keys)", err, st.Mode().Perm())
	}
	g.Stop(t)
	if err := os.Remove(acmeJSON); err != nil {
		t.Fatal(err)
	}
	g2 := harness.StartWith(t, harness.Options{Static: static, Dir: work})
	waitSerial(t, g2.EntryPoints["websecure"], "migrated.test", serial, "after restart, from the store")
	if o := g2.Output(); strings.Contains(o, "ordering certificate") || strings.Contains(o, "imported Traefik storage") {
		t.Errorf("second start ordered or imported again:\n%s", o)
	}
}
