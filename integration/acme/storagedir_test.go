package acme

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Cases 054 and 055 and issue 26, through the binary: a directory at the
// storage path (Docker's bind mount of a missing acme.json) is listed in
// /api/problems naming the path and "is a directory", and is left as it is
// (still 0755, empty); a router asking for *.*.example.com has a problem
// naming it and that name is never ordered.
func TestStorageDirectoryAndDoubleWildcardAreProblems(t *testing.T) {
	storage := filepath.Join(t.TempDir(), "acme.json")
	if err := os.Mkdir(storage, 0o755); err != nil {
		t.Fatal(err)
	}
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "r.yml", "http:\n  routers:\n    ss:\n      rule: Host(`s.example.com`)\n      service: noop@internal\n      tls: {certResolver: le, domains: [{main: \"*.*.example.com\"}]}\n")
	adm := harness.FreeAddr(t)
	static := fmt.Sprintf(`
entryPoints:
  websecure: {address: "127.0.0.1:%d"}
  traefik: {address: %q}
api: {insecure: true}
providers:
  file: {directory: %s}
certificatesResolvers:
  le:
    acme:
      caServer: https://127.0.0.1:1/dir
      storage: %s
      dnsChallenge: {provider: exec}
`, freePort(t), adm, dyn, storage)
	harness.GantryDNSBin(t)
	g := harness.StartWith(t, harness.Options{Static: static, Env: []string{"EXEC_PATH=/bin/true"}})
	harness.TryGet(t, 30*time.Second, "http://"+adm+"/api/problems", harness.StatusIs(200),
		harness.BodyContains(storage+` is a directory, not an acme.json file: left alone`),
		harness.BodyContains(`router ss@file`),
		harness.BodyContains(`*.*.example.com: ACME allows a wildcard only as the whole leftmost label`))
	if st, err := os.Stat(storage); err != nil || !st.IsDir() || st.Mode().Perm() != 0o755 {
		t.Errorf("storage directory: %v %v, want it untouched (a 0755 directory)", st.Mode(), err)
	}
	if ents, _ := os.ReadDir(storage); len(ents) != 0 {
		t.Errorf("storage directory written into: %v", ents)
	}
	if strings.Contains(g.Output(), "*.*.example.com") && strings.Contains(g.Output(), "ordering certificate") {
		t.Errorf("an order was started:\n%s", g.Output())
	}
}

// Issue 23, through the binary: a storage path whose directory is missing
// (a volume not mounted) is one problem naming the directory and one WARN
// line, not a WARN per certificate saved; once the directory exists, the
// next save writes acme.json, the problem ends and an INFO line says so.
func TestMissingStorageDirectoryWarnsOnce(t *testing.T) {
	securePort := freePort(t)
	pb := newPebble(t, freePort(t), securePort, time.Hour)
	pb.Start(t)
	missing := filepath.Join(t.TempDir(), "letsencrypt")
	storage := filepath.Join(missing, "acme.json")
	dyn := t.TempDir()
	router := func(name string) string {
		return fmt.Sprintf("http:\n  routers:\n    %s:\n      rule: Host(`%s.test`)\n      service: noop@internal\n      tls: {certResolver: alpn}\n", name, name)
	}
	for _, n := range []string{"a", "b", "c"} {
		harness.WriteFile(t, dyn, n+".yml", router(n))
	}
	adm := harness.FreeAddr(t)
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  websecure: {address: "127.0.0.1:%d"}
  traefik: {address: %q}
api: {insecure: true}
providers:
  file: {directory: %s}
certificatesResolvers:
  alpn:
    acme:
      caServer: %s
      caCertificates: [%s]
      storage: %s
      tlsChallenge: {}
`, securePort, adm, dyn, pb.DirectoryURL(), pb.CAFile, storage))
	roots := pb.Roots(t)
	for _, sni := range []string{"a.test", "b.test", "c.test"} {
		harness.Try(t, 60*time.Second, func() error { _, err := served(g.EntryPoints["websecure"], sni, roots); return err })
	}
	want := "directory " + missing + " does not exist"
	harness.TryGet(t, 60*time.Second, "http://"+adm+"/api/problems", harness.StatusIs(200), harness.BodyContains(want))
	// The WARN line is written just after the problem is recorded.
	g.WaitOutput(t, 60*time.Second, "update the Traefik storage file")
	if n := strings.Count(g.Output(), "update the Traefik storage file"); n != 1 {
		t.Errorf("%d WARN lines for the missing directory after 3 certificates, want 1:\n%s", n, g.Output())
	}

	if err := os.Mkdir(missing, 0o700); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dyn, "d.yml", router("d"))
	harness.Try(t, 60*time.Second, func() error { _, err := served(g.EntryPoints["websecure"], "d.test", roots); return err })
	harness.Try(t, 60*time.Second, func() error {
		if _, err := os.Stat(storage); err != nil {
			return err
		}
		if !strings.Contains(g.Output(), "storage file is written again") {
			return fmt.Errorf("no INFO line for the recovery")
		}
		return nil
	})
	harness.TryGet(t, 60*time.Second, "http://"+adm+"/api/problems", harness.StatusIs(200), harness.BodyLacks(want))
}
