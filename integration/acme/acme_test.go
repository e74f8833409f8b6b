package acme

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// served returns the leaf Gantry serves for sni on addr, verified against
// roots by crypto/tls (a real client: chain, name and validity).
func served(addr, sni string, roots *x509.CertPool) (*x509.Certificate, error) {
	d := &net.Dialer{Timeout: 3 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{ServerName: sni, RootCAs: roots, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0], nil
}

// apiGet fetches an API path as JSON into out.
func apiGet(addr, path string, out any) error {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

type problem struct {
	Provider, Source, Message string
	Objects                   []string
}

type certStatus struct {
	Resolver, Main, State, Serial, LastError string
	NotAfter, RenewAt                        time.Time
}

// The compose-file setup of most Traefik users, through the binary: a
// resolver with httpChallenge on "web" (which redirects everything to
// https, so the challenge must be answered ahead of the redirection), one
// with tlsChallenge, routers naming them. The CA is down when Gantry
// starts: the failed order is a problem in /api/problems naming resolver,
// domain and error while the generated certificate serves; once Pebble is
// up, both certificates are obtained, verified by a real TLS client
// against Pebble's root, listed by /api/tls/certificates, and renewed
// before their (short) expiry with a new serial served without a restart.
func TestHTTP01TLSALPN01RenewalAndCADown(t *testing.T) {
	webPort, securePort, apiPort := freePort(t), freePort(t), freePort(t)
	const validity = 45 * time.Second
	pb := newPebble(t, webPort, securePort, validity)
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
    b:
      rule: Host(`+"`b.test`"+`) || Host(`+"`www.b.test`"+`)
      entryPoints: [websecure]
      service: app
      tls:
        certResolver: alpn
  services:
    app:
      loadBalancer:
        servers: [{url: "http://%s"}]
`, be))
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: 127.0.0.1:%d
    http:
      redirections:
        entryPoint: {to: websecure}
  websecure:
    address: 127.0.0.1:%d
  traefik:
    address: 127.0.0.1:%d
api:
  insecure: true
providers:
  file:
    directory: %s
certificatesResolvers:
  le:
    acme:
      email: ops@example.com
      caServer: %s
      caCertificates: [%s]
      certificatesDuration: 1
      storage: acme.json
      httpChallenge:
        entryPoint: web
  alpn:
    acme:
      caServer: %s
      caCertificates: [%s]
      certificatesDuration: 1
      tlsChallenge: {}
`, webPort, securePort, apiPort, dir, pb.DirectoryURL(), pb.CAFile, pb.DirectoryURL(), pb.CAFile))
	api := g.EntryPoints["traefik"]
	secure := g.EntryPoints["websecure"]

	// CA down: a problem naming resolver, domain and the error; the
	// generated default certificate serves meanwhile.
	harness.Try(t, 30*time.Second, func() error {
		var ps []problem
		if err := apiGet(api, "/api/problems", &ps); err != nil {
			return err
		}
		for _, p := range ps {
			if p.Provider == "acme" && p.Source == "certificatesResolvers.le" && strings.Contains(p.Message, "a.test") &&
				strings.Contains(p.Message, "connection refused") && strings.Contains(p.Message, "generated default") {
				return nil
			}
		}
		return fmt.Errorf("no problem for le/a.test yet: %+v", ps)
	})
	c, err := tls.Dial("tcp", secure, &tls.Config{ServerName: "a.test", InsecureSkipVerify: true}) //nolint:gosec // inspects the default certificate
	if err != nil {
		t.Fatal(err)
	}
	if cn := c.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "GANTRY DEFAULT CERT" {
		t.Errorf("while the CA is down: served %q, want the generated default", cn)
	}
	c.Close()

	pb.Start(t)
	roots := pb.Roots(t)
	first := map[string]*x509.Certificate{}
	for _, sni := range []string{"a.test", "b.test", "www.b.test"} {
		harness.Try(t, 60*time.Second, func() error {
			leaf, err := served(secure, sni, roots)
			if err != nil {
				return err
			}
			first[sni] = leaf
			return nil
		})
	}
	if first["b.test"].SerialNumber.Cmp(first["www.b.test"].SerialNumber) != 0 {
		t.Errorf("b.test and www.b.test: want one certificate for the router's two Host names")
	}
	// The challenge answered ahead of the redirection; other requests on
	// web are still redirected.
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(g.URL(t, "web", "/x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently {
		t.Errorf("web /x: got %d, want the entrypoint redirection 301", resp.StatusCode)
	}
	// Routed over HTTPS with the certificate.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, secure)
	}}}
	r2, err := hc.Get("https://a.test/")
	if err != nil {
		t.Fatalf("GET https://a.test/: %v", err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusOK {
		t.Errorf("GET https://a.test/: %d", r2.StatusCode)
	}
	var certs []certStatus
	if err := apiGet(api, "/api/tls/certificates", &certs); err != nil {
		t.Fatal(err)
	}
	if len(certs) != 2 || certs[0].State != "valid" || certs[1].State != "valid" {
		t.Errorf("/api/tls/certificates: got %+v, want 2 valid", certs)
	}
	var ps []problem
	if err := apiGet(api, "/api/problems", &ps); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Provider == "acme" {
			t.Errorf("problem left after the orders succeeded: %+v", p)
		}
	}

	// Renewal: 45s certificates are renewed a third of their life before
	// expiry; the new serial is served on a new connection.
	harness.Try(t, validity, func() error {
		leaf, err := served(secure, "a.test", roots)
		if err != nil {
			return err
		}
		if leaf.SerialNumber.Cmp(first["a.test"].SerialNumber) == 0 {
			return fmt.Errorf("still serial %x", leaf.SerialNumber)
		}
		if !leaf.NotAfter.After(first["a.test"].NotAfter) {
			return fmt.Errorf("renewed certificate expires %v, not after %v", leaf.NotAfter, first["a.test"].NotAfter)
		}
		return nil
	})
	// Kept up to date in Traefik's acme.json format (mode 0600) too, so
	// going back to Traefik finds the certificate.
	fi, err := os.Stat(filepath.Join(g.Dir, "acme.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("acme.json mode %o, want 600", fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(filepath.Join(g.Dir, "acme.json"))
	var exported map[string]struct {
		Certificates []struct {
			Domain      struct{ Main string } `json:"domain"`
			Certificate []byte                `json:"certificate"`
		}
	}
	if err := json.Unmarshal(raw, &exported); err != nil || len(exported["le"].Certificates) != 1 || exported["le"].Certificates[0].Domain.Main != "a.test" ||
		!strings.Contains(string(exported["le"].Certificates[0].Certificate), "BEGIN CERTIFICATE") {
		t.Errorf("acme.json: %v, %s", err, raw)
	}
	// Stored in Gantry's store, file mode 0600.
	st, err := os.Stat(filepath.Join(g.Dir, "gantry.db"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("store mode %o: readable by others", st.Mode().Perm())
	}
}
