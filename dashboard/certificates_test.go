package dashboard

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

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
