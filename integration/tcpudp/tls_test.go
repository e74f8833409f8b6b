package tcpudp

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// certs makes a self-signed certificate for names with openssl.
func certs(t *testing.T, openssl, dir, name string, sans ...string) (crt, key string) {
	t.Helper()
	crt, key = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	var alt []string
	for _, s := range sans {
		alt = append(alt, "DNS:"+s)
	}
	out, err := run(t, "", openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
		"-keyout", key, "-out", crt, "-days", "1", "-subj", "/CN="+sans[0], "-addext", "subjectAltName="+strings.Join(alt, ","))
	if err != nil {
		t.Fatalf("openssl req: %v\n%s", err, out)
	}
	return crt, key
}

// openssl s_server behind a HostSNI TLS passthrough router answers
// s_client, while an HTTPS router on the same port answers HTTP for
// another name: one ClientHello peek decides.
func TestSNIPassthroughNextToHTTPS(t *testing.T) {
	openssl := tool(t, "openssl")
	dir := t.TempDir()
	sCrt, sKey := certs(t, openssl, dir, "backend", "pass.test")
	gCrt, gKey := certs(t, openssl, dir, "gantry", "web.test")
	saddr := harness.FreeAddr(t)
	start(t, openssl, "s_server", "-accept", saddr, "-cert", sCrt, "-key", sKey, "-rev", "-quiet")
	w := harness.StartWhoamiProc(t, "w1")
	ep := harness.FreeAddr(t)
	_, _ = gantry(t, fmt.Sprintf("  websecure:\n    address: %q", ep), fmt.Sprintf(`tcp:
  routers:
    pass:
      entryPoints: [websecure]
      rule: HostSNI(`+"`pass.test`"+`)
      service: pass
      tls:
        passthrough: true
  services:
    pass:
      loadBalancer:
        servers:
          - address: %q
http:
  routers:
    web:
      entryPoints: [websecure]
      rule: Host(`+"`web.test`"+`)
      service: web
      tls: {}
  services:
    web:
      loadBalancer:
        servers:
          - url: %q
tls:
  certificates:
    - certFile: %q
      keyFile: %q
`, saddr, w.URL(), gCrt, gKey))
	// s_client: the certificate seen is the backend's (passthrough), and
	// s_server -rev answers the line reversed.
	harness.Try(t, poll, func() error {
		out, _ := run(t, "hello\n", openssl, "s_client", "-connect", ep, "-servername", "pass.test", "-quiet", "-verify_quiet", "-ign_eof")
		if !strings.Contains(out, "olleh") {
			return fmt.Errorf("s_client: %q", out)
		}
		return nil
	})
	out, _ := run(t, "", openssl, "s_client", "-connect", ep, "-servername", "pass.test", "-showcerts")
	if !strings.Contains(out, "CN = pass.test") && !strings.Contains(out, "CN=pass.test") {
		t.Errorf("passthrough served another certificate:\n%s", out)
	}
	// HTTPS on the same port for web.test, terminated by Gantry.
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{ServerName: "web.test", InsecureSkipVerify: true}}}
	harness.Try(t, poll, func() error {
		req, _ := http.NewRequest("GET", "https://"+ep+"/", nil)
		req.Host = "web.test"
		r, err := c.Do(req)
		if err != nil {
			return err
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || !strings.Contains(string(b), "Name: w1") {
			return fmt.Errorf("https: %d %q", r.StatusCode, b)
		}
		if r.TLS.PeerCertificates[0].Subject.CommonName != "web.test" {
			return fmt.Errorf("https cert %s", r.TLS.PeerCertificates[0].Subject.CommonName)
		}
		return nil
	})
	_ = os.Remove(sKey)
}

// TLS termination: Gantry runs the handshake with its certificate store
// and hands the plaintext to a plain TCP server (socat echo).
func TestTLSTerminationToPlainServer(t *testing.T) {
	openssl, socat := tool(t, "openssl"), tool(t, "socat")
	dir := t.TempDir()
	gCrt, gKey := certs(t, openssl, dir, "gantry", "echo.test")
	eaddr := harness.FreeAddr(t)
	start(t, socat, "TCP-LISTEN:"+port(eaddr)+",bind=127.0.0.1,reuseaddr,fork", "EXEC:cat")
	ep := harness.FreeAddr(t)
	_, _ = gantry(t, fmt.Sprintf("  tls:\n    address: %q", ep), fmt.Sprintf(`tcp:
  routers:
    echo:
      rule: HostSNI(`+"`echo.test`"+`)
      service: echo
      tls: {}
  services:
    echo:
      loadBalancer:
        servers:
          - address: %q
tls:
  certificates:
    - certFile: %q
      keyFile: %q
`, eaddr, gCrt, gKey))
	harness.Try(t, poll, func() error {
		conn, err := tls.Dial("tcp", ep, &tls.Config{ServerName: "echo.test", InsecureSkipVerify: true})
		if err != nil {
			return err
		}
		defer conn.Close()
		if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "echo.test" {
			return fmt.Errorf("cert %s", cn)
		}
		_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
		if _, err := conn.Write([]byte("ping\n")); err != nil {
			return err
		}
		b := make([]byte, 5)
		if _, err := io.ReadFull(conn, b); err != nil || string(b) != "ping\n" {
			return fmt.Errorf("echo: %q %v", b, err)
		}
		return nil
	})
}
