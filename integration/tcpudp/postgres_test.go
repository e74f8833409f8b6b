package tcpudp

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// startPostgres runs a private postgres with TLS (certificate for
// db.test) on a free loopback port and returns its address. As root it
// runs as the postgres user, since postgres refuses to run as root.
func startPostgres(t *testing.T) string {
	t.Helper()
	initdb, postgres, openssl := tool(t, "initdb"), tool(t, "postgres"), tool(t, "openssl")
	base, err := os.MkdirTemp("", "gantry-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	data := filepath.Join(base, "data")
	var asUser []string
	var uid, gid int = -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			harness.MissingTool(t, "running as root and no postgres user (install postgresql)")
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		asUser = []string{"runuser", "-u", "postgres", "--"}
		if err := os.Chown(base, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	cmd := func(name string, args ...string) []string {
		return append(append(append([]string{}, asUser...), name), args...)
	}
	c := cmd(initdb, "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")
	if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	crt, key := certs(t, openssl, base, "pg", "db.test")
	for _, f := range []string{crt, key} {
		if uid >= 0 {
			_ = os.Chown(f, uid, gid)
		}
		_ = os.Chmod(f, 0o600)
	}
	// hostssl and host both trust: the test checks the transport, not auth.
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte("local all all trust\nhost all all 127.0.0.1/32 trust\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if uid >= 0 {
		_ = os.Chown(filepath.Join(data, "pg_hba.conf"), uid, gid)
	}
	addr := harness.FreeAddr(t)
	c = cmd(postgres, "-D", data, "-k", base, "-h", "127.0.0.1", "-p", port(addr),
		"-c", "ssl=on", "-c", "ssl_cert_file="+crt, "-c", "ssl_key_file="+key, "-c", "fsync=off")
	start(t, c[0], c[1:]...)
	psql := tool(t, "psql")
	harness.Try(t, poll, func() error {
		out, err := run(t, "", psql, "host=127.0.0.1 port="+port(addr)+" user=postgres sslmode=disable", "-Atc", "select 1")
		if err != nil {
			return fmt.Errorf("postgres not ready: %v %s", err, out)
		}
		return nil
	})
	return addr
}

// psql "sslmode=require" through HostSNI(`db.test`) routers: with TLS
// passthrough the session is encrypted end to end with postgres's own
// certificate (Gantry answered the SSLRequest and replayed it to the
// server); with termination Gantry's certificate is used and postgres sees
// a plain connection. Postgres STARTTLS is recognised as Traefik v3 does.
func TestPostgresSTARTTLS(t *testing.T) {
	psql, openssl := tool(t, "psql"), tool(t, "openssl")
	pg := startPostgres(t)
	dir := t.TempDir()
	gCrt, gKey := certs(t, openssl, dir, "gantry", "term.test")
	ep := harness.FreeAddr(t)
	_, _ = gantry(t, fmt.Sprintf("  pg:\n    address: %q", ep), fmt.Sprintf(`tcp:
  routers:
    pass:
      rule: HostSNI(`+"`db.test`"+`)
      service: pg
      tls:
        passthrough: true
    term:
      rule: HostSNI(`+"`term.test`"+`)
      service: pg
      tls: {}
  services:
    pg:
      loadBalancer:
        servers:
          - address: %q
tls:
  certificates:
    - certFile: %q
      keyFile: %q
`, pg, gCrt, gKey))
	query := "select ssl from pg_stat_ssl where pid = pg_backend_pid()"
	for _, tc := range []struct{ host, wantSSL string }{
		{"db.test", "t"},   // passthrough: postgres terminates TLS itself
		{"term.test", "f"}, // termination: postgres sees plaintext from Gantry
	} {
		t.Run(tc.host, func(t *testing.T) {
			// sslsni=1 (default) sends the host name as SNI; hostaddr
			// dials Gantry without resolving it.
			conn := fmt.Sprintf("host=%s hostaddr=127.0.0.1 port=%s user=postgres sslmode=require", tc.host, port(ep))
			harness.Try(t, poll, func() error {
				out, err := run(t, "", psql, conn, "-Atc", query)
				if err != nil || strings.TrimSpace(out) != tc.wantSSL {
					return fmt.Errorf("psql: %v %q", err, out)
				}
				return nil
			})
		})
	}
}
