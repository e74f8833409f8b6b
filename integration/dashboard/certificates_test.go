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
	"regexp"
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
	return writeCertSpan(t, dir, host, caName, time.Now().Add(-time.Hour), time.Now().Add(validity))
}

// writeCertSpan is writeIssuedCert for a certificate valid from notBefore
// to notAfter.
func writeCertSpan(t *testing.T, dir, host, caName string, notBefore, notAfter time.Time) (certFile, keyFile string) {
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
		NotBefore: notBefore, NotAfter: notAfter}
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

// TestCertificatesPageWithRealCertificates (issue 28 item 4): Pebble
// issues a.test 1-hour certificates to resolver le over TLS-ALPN-01;
// resolver down asks a CA that refuses connections for b.test;
// tls.certificates holds c.test, issued 88 days ago and expiring in 2
// days, and e.test, fresh for 90 days. The certificates page shows each
// with its hosts, issuer, resolver ("file" for the file ones), the time
// left in hours and minutes under a day (a.test "59 min", never "0 days"),
// days and hours above, a bar of the fraction of its lifetime left
// coloured by it and by the renewal window (a.test green before its
// renewal time, c.test red, e.test green), the renewal with its time of
// day, failed with the CA's error, the file ones not renewed (c.test
// "expiring", to replace before its expiry), and the routers each serves
// (c@file, e@file; not "store default"). c.test near expiry is a warning
// on the Problems page naming router c@file. Screenshots:
// certificates.png, certificates-problem.png.
func TestCertificatesPageWithRealCertificates(t *testing.T) {
	ctx := browser(t)
	securePort := harness.FreePort(t)
	pb := harness.NewPebble(t, harness.FreePort(t), securePort, time.Hour)
	pb.Start(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadCA := "https://" + l.Addr().String() + "/dir"
	l.Close()
	be := harness.StartWhoami(t, "app")
	dir := t.TempDir()
	certFile, keyFile := writeCertSpan(t, dir, "c.test", "Gantry Test File CA", time.Now().Add(-88*24*time.Hour), time.Now().Add(2*24*time.Hour))
	eCert, eKey := writeIssuedCert(t, dir, "e.test", "Gantry Test File CA", 90*24*time.Hour)
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
    e:
      rule: Host(`+"`e.test`"+`) && PathPrefix(`+"`/`"+`)
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
    - certFile: %s
      keyFile: %s
`, be, certFile, keyFile, eCert, eKey))
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
	harness.TryGet(t, 60*time.Second, admin+"/api/problems", harness.StatusIs(200), harness.BodyContains("certificate c.test"), harness.BodyContains(`"router c@file"`))
	step(t, ctx, "open the certificates page", 30*time.Second,
		chromedp.Navigate(admin+"/dashboard/#certificates"),
		shown(chromedp.CSS(`#cert-list tr[data-cert="a.test"][data-state="valid"]`)),
		shown(chromedp.CSS(`#cert-list tr[data-cert="b.test"][data-state="failed"]`)),
		shown(chromedp.CSS(`#cert-list tr[data-cert="c.test"]`)),
		shown(chromedp.CSS(`#cert-list tr[data-cert="e.test"]`)),
	)
	read := func(host string) []string {
		js := fmt.Sprintf(`Array.from(document.querySelectorAll('#cert-list tr[data-cert="%s"] td')).map((td) => td.innerText)`, host)
		return value(t, ctx, "read the row of "+host, 60*time.Second, chromedp.Evaluate[[]string](js))
	}
	barWidth := func(host string) float64 {
		js := fmt.Sprintf(`parseFloat(document.querySelector('#cert-list tr[data-cert="%s"] .expiry .bar').style.width)`, host)
		return value(t, ctx, "read the bar of "+host, 60*time.Second, chromedp.Evaluate[float64](js))
	}
	expiryClass := func(host string) string {
		return textOf(t, ctx, "read the expiry class of "+host, `#cert-list tr[data-cert="`+host+`"] .expiry`, "className")
	}
	timeOfDay := regexp.MustCompile(`\d{1,2}:\d{2}`)

	a := read("a.test")
	if len(a) != 6 {
		t.Fatalf("a.test row %q, want 6 cells", a)
	}
	if !strings.Contains(a[1], "Pebble") || a[2] != "le" {
		t.Errorf("a.test issuer %q resolver %q, want Pebble's intermediate and le", a[1], a[2])
	}
	if !regexp.MustCompile(`^(5\d min|1 h 0 min)$`).MatchString(strings.TrimSpace(a[3])) {
		t.Errorf("a.test (a 1-hour certificate) expires in %q, want 50 min to 1 h 0 min", a[3])
	}
	if w := barWidth("a.test"); w < 80 || !strings.Contains(expiryClass("a.test"), "fine") {
		t.Errorf("a.test bar %.1f%% class %q, want over 80%% of its lifetime left and fine (before its renewal time)", w, expiryClass("a.test"))
	}
	if !strings.Contains(a[4], "valid") || !strings.Contains(a[4], "renews") || !timeOfDay.MatchString(a[4]) || !strings.Contains(a[4], "min)") {
		t.Errorf("a.test state %q, want valid with its renewal date and time of day, in minutes", a[4])
	}
	if strings.TrimSpace(a[5]) != "a@file" {
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
	if !regexp.MustCompile(`^(1 day|2 days) \d+ h$`).MatchString(strings.TrimSpace(c[3])) {
		t.Errorf("c.test expires in %q, want about 2 days in days and hours", c[3])
	}
	if w := barWidth("c.test"); w > 4 || !strings.Contains(expiryClass("c.test"), "bad") {
		t.Errorf("c.test bar %.1f%% class %q, want about 2%% (2 of 90 days) and bad (red: under a tenth left)", w, expiryClass("c.test"))
	}
	if !strings.Contains(c[4], "expiring") || !strings.Contains(c[4], "replace before") || !timeOfDay.MatchString(c[4]) {
		t.Errorf("c.test state %q, want expiring, replace before its expiry time", c[4])
	}
	if strings.TrimSpace(c[5]) != "c@file" {
		t.Errorf("c.test used by %q, want the router it serves, c@file", c[5])
	}
	e := read("e.test")
	if len(e) != 6 || !strings.Contains(e[4], "valid") || strings.TrimSpace(e[5]) != "e@file" || !strings.Contains(expiryClass("e.test"), "fine") {
		t.Errorf("e.test row %q class %q, want valid, used by e@file, fine", e, expiryClass("e.test"))
	}
	shot(t, ctx, "certificates.png")

	step(t, ctx, "see the file certificate on the problems page", 60*time.Second,
		chromedp.Evaluate[chromedp.Void](`location.hash = '#problems'; undefined`),
		shown(chromedp.CSS(`#problem-groups [data-source="tls.certificates"] li.warning`)))
	if p := textOf(t, ctx, "read the certificate problem", `#problem-groups [data-source="tls.certificates"] li.warning`, "innerText"); !strings.Contains(p, "c.test") || !strings.Contains(p, "c@file") || !strings.Contains(p, "expires in") {
		t.Errorf("certificate problem %q, want c.test, router c@file, expires in", p)
	}
	shot(t, ctx, "certificates-problem.png")
}
