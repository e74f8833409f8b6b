package dashboard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// TestTLSOptions: /api/tls/options lists every named set with its
// effective minimum version and client authentication, "default" even when
// not configured, and counts the client CAs instead of echoing them (a
// caFiles entry may be the PEM itself).
func TestTLSOptions(t *testing.T) {
	f := newFixture(t, nil)
	m := loadMerged(t, "merged.yml")
	m.Config.TLS.Options = map[string]*config.TLSOptions{
		"mtls": {MinVersion: "VersionTLS13", SniStrict: true, ClientAuth: config.ClientAuth{CAFiles: []string{"-----BEGIN CERTIFICATE----- SECRETCA"}, ClientAuthType: "RequireAndVerifyClientCert"}},
	}
	f.tables.swap(m)
	rec := do(t, f.api.Handler(), "GET", "/api/tls/options", nil)
	if rec.Code != 200 || strings.Contains(rec.Body.String(), "SECRETCA") {
		t.Fatalf("GET /api/tls/options: %d %s", rec.Code, rec.Body)
	}
	var got []tlsOptionsItem
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "default" || got[0].Configured || got[0].MinVersion != "VersionTLS12" {
		t.Fatalf("options %+v, want the default (not configured, TLS 1.2) then mtls", got)
	}
	if o := got[1]; o.Name != "mtls" || o.MinVersion != "VersionTLS13" || !o.SniStrict || o.ClientAuthType != "RequireAndVerifyClientCert" || o.ClientCAs != 1 {
		t.Errorf("mtls: %+v", o)
	}
}
