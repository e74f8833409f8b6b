package acme

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// startNamed runs Debian's named (bind9) on a loopback port, authoritative
// for "test." (every name has A 127.0.0.1) and accepting RFC 2136 updates
// signed with the returned TSIG key (hmac-sha256).
func startNamed(t *testing.T) (addr, keyName, secret string) {
	t.Helper()
	bin, err := exec.LookPath("named")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/named"); serr != nil {
			harness.MissingTool(t, "named not installed: run scripts/setup/bind9.sh")
		}
		bin = "/usr/sbin/named"
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var k [32]byte
	_, _ = rand.Read(k[:])
	keyName, secret = "gantry-test.", base64.StdEncoding.EncodeToString(k[:])
	port := freeDNSPort(t)
	conf := fmt.Sprintf(`
options {
	directory "%[1]s";
	pid-file "%[1]s/named.pid";
	listen-on port %[2]d { 127.0.0.1; };
	listen-on-v6 { none; };
	recursion no;
	dnssec-validation no;
	notify no;
};
controls { };
key "%[3]s" { algorithm hmac-sha256; secret "%[4]s"; };
zone "test" {
	type primary;
	file "%[1]s/test.zone";
	journal "%[1]s/test.zone.jnl";
	allow-update { key "%[3]s"; };
};
`, dir, port, keyName, secret)
	zone := `$TTL 5
@	IN SOA ns.test. admin.test. 1 5 5 60 5
@	IN NS ns.test.
ns	IN A 127.0.0.1
@	IN A 127.0.0.1
*	IN A 127.0.0.1
`
	for name, content := range map[string]string{"named.conf": conf, "test.zone": zone} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	harness.StartProcess(t, "named", dir, bin, []string{"-g", "-c", filepath.Join(dir, "named.conf")}, nil)
	addr = "127.0.0.1:" + strconv.Itoa(port)
	harness.WaitListening(t, 60*time.Second, addr)
	return addr, keyName, secret
}

// DNS-01 for a wildcard through the RFC 2136 provider (Traefik's name and
// RFC2136_* variables) against a real named that Pebble resolves with: the
// TXT record is added by a signed dynamic update, Pebble validates it, and
// the wildcard certificate serves any name below it, verified against
// Pebble's root.
func TestDNS01WildcardRFC2136(t *testing.T) {
	ns, key, secret := startNamed(t)
	pb := newPebble(t, freePort(t), freePort(t), time.Hour)
	pb.DNSServer = ns
	pb.Start(t)
	roots := pb.Roots(t)
	harness.GantryDNSBin(t)
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "r.yml", "http:\n  routers:\n    w:\n      rule: HostRegexp(`^.+\\.wild\\.test$`)\n      service: noop@internal\n      tls:\n        certResolver: dns\n        domains:\n          - main: \"*.wild.test\"\n            sans: [wild.test]\n")
	g := harness.StartWith(t, harness.Options{Static: fmt.Sprintf(`
entryPoints:
  websecure: {address: "127.0.0.1:%d"}
providers:
  file: {directory: %s}
certificatesResolvers:
  dns:
    acme:
      caServer: %s
      caCertificates: [%s]
      dnsChallenge:
        provider: rfc2136
        resolvers: ["%s"]
        propagation: {disableANSChecks: true}
`, freePort(t), dyn, pb.DirectoryURL(), pb.CAFile, ns), Env: []string{
		"RFC2136_NAMESERVER=" + ns, "RFC2136_TSIG_KEY=" + key, "RFC2136_TSIG_SECRET=" + secret,
		"RFC2136_TSIG_ALGORITHM=hmac-sha256.", "RFC2136_PROPAGATION_TIMEOUT=30", "RFC2136_POLLING_INTERVAL=1",
		"RFC2136_SEQUENCE_INTERVAL=1", // *.wild.test and wild.test share one TXT name: solved one after the other
	}})
	start := time.Now()
	defer func() { t.Logf("certificate served after %v", time.Since(start).Round(time.Second)) }()
	for _, sni := range []string{"a.wild.test", "other.wild.test", "wild.test"} {
		harness.Try(t, 90*time.Second, func() error {
			_, err := served(g.EntryPoints["websecure"], sni, roots)
			return err
		})
	}
	// The helper ran only for the order: once it is done, gantry has no
	// gantry-dns child left.
	harness.Try(t, 60*time.Second, func() error {
		if kids := children(t, g.Pid(), "gantry-dns"); len(kids) > 0 {
			return fmt.Errorf("gantry-dns still runs after the order: pids %v", kids)
		}
		return nil
	})
}

// children returns the pids of pid's child processes whose command name
// (/proc/<pid>/comm) is comm.
func children(t *testing.T, pid int, comm string) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var kids []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 || s[open+1:end] != comm || fields[1] != strconv.Itoa(pid) {
			continue
		}
		if k, err := strconv.Atoi(strings.TrimSpace(s[:open])); err == nil {
			kids = append(kids, k)
		}
	}
	return kids
}

// A gantry installed without gantry-dns serves everything else and lists
// the resolver whose dnsChallenge names a provider in /api/problems,
// naming the field and where the helper was looked for.
func TestDNSChallengeWithoutHelper(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "gantry")
	if err := os.Link(harness.GantryBin(t), bin); err != nil { // another file system: a copy
		b, err := os.ReadFile(harness.GantryBin(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	adm := harness.FreeAddr(t)
	cfg := harness.WriteFile(t, dir, "gantry.yml", fmt.Sprintf(`
entryPoints:
  traefik: {address: %q}
api: {insecure: true}
ping: {}
certificatesResolvers:
  dns:
    acme:
      caServer: https://127.0.0.1:1/dir
      dnsChallenge: {provider: rfc2136}
  tls:
    acme:
      caServer: https://127.0.0.1:1/dir
      tlsChallenge: {}
`, adm))
	harness.StartProcess(t, "gantry", dir, bin, []string{"--configFile=" + cfg}, []string{"RFC2136_NAMESERVER=127.0.0.1:1"})
	harness.TryGet(t, 30*time.Second, "http://"+adm+"/ping", harness.StatusIs(200))
	harness.TryGet(t, 30*time.Second, "http://"+adm+"/api/problems", harness.StatusIs(200),
		harness.BodyContains(`certificatesResolvers.dns.acme.dnsChallenge.provider: DNS provider \"rfc2136\": the DNS-01 helper is not installed: `+filepath.Join(dir, "gantry-dns")))
	harness.TryGet(t, 30*time.Second, "http://"+adm+"/api/problems", harness.StatusIs(200),
		harness.BodyLacks(`certificatesResolvers.tls`))
}
