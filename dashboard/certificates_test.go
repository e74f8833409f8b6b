package dashboard

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/acme"
)

type fakeCerts struct{}

func (fakeCerts) Certificates() []acme.CertificateStatus {
	return []acme.CertificateStatus{{Resolver: "le", Main: "a.example.com", State: "valid", NotAfter: t0.Add(60 * 24 * time.Hour), Users: []string{"app@file", "defaultGeneratedCert"}}}
}

func (fakeCerts) Problems() []providers.Problem {
	return []providers.Problem{{Provider: "acme", Source: "certificatesResolvers.le", Message: "domain b.example.com: certificate order failed (1 attempts, next attempt x): boom", Severity: providers.SeverityError}}
}

// /api/tls/certificates lists the resolvers' certificates (an empty list
// without resolvers) and /api/problems carries their live failures.
func TestCertificatesEndpoint(t *testing.T) {
	f := newFixture(t, nil)
	rec := do(t, f.api.Handler(), http.MethodGet, "/api/tls/certificates", nil)
	if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != "[]" {
		t.Errorf("without resolvers: %d %s, want 200 []", rec.Code, rec.Body)
	}
	f = newFixture(t, func(o *Options) { o.Certificates = fakeCerts{} })
	rec = do(t, f.api.Handler(), http.MethodGet, "/api/tls/certificates", nil)
	var got []acme.CertificateStatus
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got) != 1 || got[0].Main != "a.example.com" || got[0].State != "valid" {
		t.Errorf("certificates: %s (%v)", rec.Body, err)
	}
	// The routers using a certificate are names, not basicAuth users: the
	// API's redaction must not turn them into REDACTED.
	if len(got) == 1 && strings.Join(got[0].Users, ",") != "app@file,defaultGeneratedCert" {
		t.Errorf("certificate users = %q, want the router names: %s", got[0].Users, rec.Body)
	}
	rec = do(t, f.api.Handler(), http.MethodGet, "/api/problems", nil)
	if !strings.Contains(rec.Body.String(), "certificatesResolvers.le") || !strings.Contains(rec.Body.String(), "b.example.com: certificate order failed") {
		t.Errorf("problems lack the failed order: %s", rec.Body)
	}
}

// pemCert is a self-signed PEM certificate for names valid from notBefore
// to notAfter.
func pemCert(t *testing.T, notBefore, notAfter time.Time, names ...string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(notAfter.UnixNano()), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names, NotBefore: notBefore, NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// A file certificate lists the routers whose hosts it serves (HTTP by
// Host, TCP by HostSNI, a wildcard for one label), is "expiring" in the
// last third of its lifetime and a warning naming those routers, an error
// once expired; a fresh one is valid and no problem.
func TestFileCertificateUsersAndExpiry(t *testing.T) {
	now := t0
	c := &config.Configuration{
		HTTP: &config.HTTPConfiguration{Routers: map[string]*config.Router{
			"shop@file":  {RouterCommon: config.RouterCommon{Rule: "Host(`shop.example.com`) && PathPrefix(`/`)"}, TLS: &config.RouterTLSConfig{}},
			"deep@file":  {RouterCommon: config.RouterCommon{Rule: "Host(`a.b.example.com`)"}, TLS: &config.RouterTLSConfig{}},
			"plain@file": {RouterCommon: config.RouterCommon{Rule: "Host(`shop.example.com`)"}},
			"acme@file":  {RouterCommon: config.RouterCommon{Rule: "Host(`shop.example.com`)"}, TLS: &config.RouterTLSConfig{CertResolver: "le"}},
		}},
		TCP: &config.TCPConfiguration{Routers: map[string]*config.TCPRouter{
			"db@file": {RouterCommon: config.RouterCommon{Rule: "HostSNI(`db.example.com`)"}, TLS: &config.RouterTCPTLSConfig{}},
		}},
		TLS: &config.TLSConfiguration{Certificates: []*config.CertAndStores{
			{Certificate: config.Certificate{CertFile: pemCert(t, now.Add(-88*24*time.Hour), now.Add(2*24*time.Hour), "*.example.com")}},
			{Certificate: config.Certificate{CertFile: pemCert(t, now.Add(-time.Hour), now.Add(89*24*time.Hour), "fresh.example.org")}},
			{Certificate: config.Certificate{CertFile: pemCert(t, now.Add(-2*time.Hour), now.Add(-time.Hour), "old.example.net")}},
		}},
	}
	list := fileCertificates(c, nil, now)
	if len(list) != 3 {
		t.Fatalf("file certificates %+v, want 3", list)
	}
	byMain := map[string]acme.CertificateStatus{}
	for _, s := range list {
		byMain[s.Main] = s
	}
	wild := byMain["*.example.com"]
	if wild.State != fileExpiring || strings.Join(wild.Users, ",") != "router shop@file,tcp router db@file" {
		t.Errorf("*.example.com: state %q users %q, want expiring, router shop@file and tcp router db@file", wild.State, wild.Users)
	}
	if f := byMain["fresh.example.org"]; f.State != "valid" || strings.Join(f.Users, ",") != "store default" {
		t.Errorf("fresh.example.org: state %q users %q, want valid, store default", f.State, f.Users)
	}
	if o := byMain["old.example.net"]; o.State != "expired" {
		t.Errorf("old.example.net: state %q, want expired", o.State)
	}
	probs := certificateProblems(list, now)
	if len(probs) != 2 {
		t.Fatalf("problems %+v, want the expiring and the expired certificate", probs)
	}
	w := probs[0]
	if w.Severity != providers.SeverityWarning || !strings.Contains(w.Message, "*.example.com") || !strings.Contains(w.Message, "expires in 2 days 0 h") ||
		strings.Join(w.Objects, ",") != "router shop@file,tcp router db@file" {
		t.Errorf("expiring problem %+v", w)
	}
	if e := probs[1]; e.Severity != providers.SeverityError || !strings.Contains(e.Message, "old.example.net") || !strings.Contains(e.Message, "expired") {
		t.Errorf("expired problem %+v", e)
	}
	if got := remaining(3*time.Hour + 12*time.Minute); got != "3 h 12 min" {
		t.Errorf("remaining(3h12m) = %q", got)
	}
	if got := remaining(42 * time.Minute); got != "42 min" {
		t.Errorf("remaining(42m) = %q", got)
	}
}
