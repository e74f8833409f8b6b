package dashboard

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// writeIssuedCert writes a certificate for host valid for validity from
// now, signed by a CA named caName, and its key, into dir.
func writeIssuedCert(t *testing.T, dir, host, caName string, validity time.Duration) (certFile, keyFile string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: caName}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(validity)}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, host+".pem"), filepath.Join(dir, host+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestCertificatesPageWithRealCertificates: Pebble issues a.test (20-day
// certificates) to resolver le over TLS-ALPN-01; resolver down asks a CA
// that refuses connections for b.test; tls.certificates holds a file
// certificate for c.test expiring in 5 days. The certificates page shows
// each with its hosts, issuer, resolver ("file" for c.test), the days left
// as a bar sized by them (amber 19 days, red 4 days), and the renewal
// state: valid with its renewal date, failed with the CA's error, the file
// one not renewed. Screenshot: certificates.png.
func TestCertificatesPageWithRealCertificates(t *testing.T) {
	ctx := browser(t)
	securePort := harness.FreePort(t)
	pb := harness.NewPebble(t, harness.FreePort(t), securePort, 20*24*time.Hour)
	pb.Start(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadCA := "https://" + l.Addr().String() + "/dir"
	l.Close()
	be := harness.StartWhoami(t, "app")
	dir := t.TempDir()
	certFile, keyFile := writeIssuedCert(t, dir, "c.test", "Gantry Test File CA", 5*24*time.Hour)
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
      rule: Host(`+"`b.test`"+`)
      entryPoints: [websecure]
      service: app
      tls:
        certResolver: down
    c:
      rule: Host(`+"`c.test`"+`)
      entryPoints: [websecure]
      service: app
      tls: {}
  services:
    app:
      loadBalancer:
        servers: [{url: "http://%s"}]
tls:
  certificates:
    - certFile: %s
      keyFile: %s
`, be, certFile, keyFile))
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
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
      storage: acme.json
      tlsChallenge: {}
  down:
    acme:
      caServer: %s
      storage: acme.json
      tlsChallenge: {}
`, securePort, harness.FreePort(t), dir, pb.DirectoryURL(), pb.CAFile, deadCA))
	roots := pb.Roots(t)
	harness.Try(t, 60*time.Second, func() error {
		c, err := tls.Dial("tcp", g.EntryPoints["websecure"], &tls.Config{ServerName: "a.test", RootCAs: roots})
		if err != nil {
			return err
		}
		return c.Close()
	})
	admin := g.URL(t, "traefik", "")
	step(t, ctx, "open the certificates page", 30*time.Second,
		chromedp.Navigate(admin+"/dashboard/#certificates"),
		chromedp.WaitVisible(chromedp.CSS(`#cert-list tr[data-cert="a.test"][data-state="valid"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#cert-list tr[data-cert="b.test"][data-state="failed"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#cert-list tr[data-cert="c.test"]`)),
	)
	read := func(host string) []string {
		js := fmt.Sprintf(`Array.from(document.querySelectorAll('#cert-list tr[data-cert="%s"] td')).map((td) => td.innerText)`, host)
		return value(t, ctx, "read the row of "+host, 5*time.Second, chromedp.Evaluate[[]string](js))
	}
	barWidth := func(host string) float64 {
		js := fmt.Sprintf(`parseFloat(document.querySelector('#cert-list tr[data-cert="%s"] .expiry .bar').style.width)`, host)
		return value(t, ctx, "read the bar of "+host, 5*time.Second, chromedp.Evaluate[float64](js))
	}
	expiryClass := func(host string) string {
		return textOf(t, ctx, "read the expiry class of "+host, `#cert-list tr[data-cert="`+host+`"] .expiry`, "className")
	}
	days := func(cell string) int {
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cell), "days")))
		if err != nil {
			t.Errorf("expiry cell %q is not 'N days'", cell)
		}
		return n
	}

	a := read("a.test")
	if len(a) != 6 {
		t.Fatalf("a.test row %q, want 6 cells", a)
	}
	if !strings.Contains(a[1], "Pebble") || a[2] != "le" {
		t.Errorf("a.test issuer %q resolver %q, want Pebble's intermediate and le", a[1], a[2])
	}
	if d := days(a[3]); d < 18 || d > 20 {
		t.Errorf("a.test expires in %d days, want about 19 (a 20-day Pebble certificate)", d)
	}
	if w := barWidth("a.test"); w < 19 || w > 23 || !strings.Contains(expiryClass("a.test"), "soon") {
		t.Errorf("a.test bar %.1f%% class %q, want about 21%% (19/90) and soon (amber: under 30 days)", w, expiryClass("a.test"))
	}
	if !strings.Contains(a[4], "valid") || !strings.Contains(a[4], "renews") {
		t.Errorf("a.test state %q, want valid with its renewal date", a[4])
	}
	if !strings.Contains(a[5], "a@file") {
		t.Errorf("a.test used by %q, want router a@file", a[5])
	}

	b := read("b.test")
	if len(b) != 6 || b[2] != "down" || !strings.Contains(b[3], "no certificate yet") || !strings.Contains(b[4], "failed") || !strings.Contains(b[4], "connection refused") {
		t.Errorf("b.test row %q, want resolver down, no certificate yet, failed with the CA's error", b)
	}

	c := read("c.test")
	if len(c) != 6 || !strings.Contains(c[1], "Gantry Test File CA") || c[2] != "file" || !strings.Contains(c[4], "not renewed") {
		t.Errorf("c.test row %q, want the file CA, resolver file, not renewed", c)
	}
	if d := days(c[3]); d < 4 || d > 5 {
		t.Errorf("c.test expires in %d days, want 4 or 5", d)
	}
	if w := barWidth("c.test"); w < 3 || w > 7 || !strings.Contains(expiryClass("c.test"), "bad") {
		t.Errorf("c.test bar %.1f%% class %q, want about 5%% and bad (red: under 7 days)", w, expiryClass("c.test"))
	}
	shot(t, ctx, "certificates.png")
}
