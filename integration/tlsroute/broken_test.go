package tlsroute

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// apiJSON GETs path on the API entrypoint and decodes the JSON answer
// into v.
func apiJSON(t *testing.T, api, path string, v any) {
	t.Helper()
	resp, err := http.Get("http://" + api + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

type problem struct {
	Source   string   `json:"source"`
	Objects  []string `json:"objects"`
	Message  string   `json:"message"`
	Severity string   `json:"severity"`
}

// Case 038-6/7: options that cannot be built fail closed. The handshake
// for x.example.com fails (no fallback to the default options), the
// router is disabled with an error naming the options, /api/problems
// lists both, and b.example.com is untouched. A TLS 1.3 suite in
// cipherSuites is a warning.
func TestBrokenTLSOptionsFailClosed(t *testing.T) {
	p := newPKI(t)
	w := harness.StartWhoami(t, "broken")
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(`
http:
  routers:
    x: {rule: "Host(`+"`x.example.com`"+`)", entryPoints: [websecure], tls: {options: broken}, service: s}
    b: {rule: "Host(`+"`b.example.com`"+`)", entryPoints: [websecure], tls: {options: modern}, service: s}
  services:
    s: {loadBalancer: {servers: [{url: "http://%s"}]}}
tls:
  certificates:
    - {certFile: %q, keyFile: %q}
  options:
    broken: {cipherSuites: [TLS_NOT_A_SUITE]}
    modern: {cipherSuites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]}
`, w, p.serverCert, p.serverKey))
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  websecure: {address: %q}
  traefik: {address: %q}
api: {insecure: true}
providers: {file: {directory: %q}}
`, harness.FreeAddr(t), harness.FreeAddr(t), dyn))
	g.WaitOutput(t, wait, "config applied")
	f := &front{addr: g.EntryPoints["websecure"]}
	if _, err := f.h1(&tls.Config{ServerName: "x.example.com", InsecureSkipVerify: true}, "x.example.com", "/"); err == nil { //nolint:gosec // only whether the handshake completes matters
		t.Errorf("SNI x.example.com (broken options): the handshake succeeded")
	}
	if code, err := f.h1(&tls.Config{ServerName: "b.example.com", InsecureSkipVerify: true}, "b.example.com", "/"); err != nil || code != 200 { //nolint:gosec // self-signed
		t.Errorf("b.example.com: %d %v, want 200", code, err)
	}
	var x struct {
		Status string   `json:"status"`
		Error  []string `json:"error"`
	}
	apiJSON(t, g.EntryPoints["traefik"], "/api/http/routers/x@file", &x)
	if x.Status != "disabled" || !strings.Contains(strings.Join(x.Error, " "), `tls.options "broken@file" cannot be built`) {
		t.Errorf("router x@file: %s %q, want disabled naming tls.options broken", x.Status, x.Error)
	}
	var probs []problem
	apiJSON(t, g.EntryPoints["traefik"], "/api/problems", &probs)
	var router, options, warning bool
	for _, pr := range probs {
		switch {
		case strings.Contains(pr.Source, "router x@file") && strings.Contains(pr.Message, `tls.options "broken@file"`) && pr.Severity == "error":
			router = true
		case pr.Source == "tls" && strings.Contains(pr.Message, "tls.options.broken@file: cipherSuites: unknown suite \"TLS_NOT_A_SUITE\""):
			options = true
		case pr.Source == "tls" && strings.Contains(pr.Message, "TLS_AES_128_GCM_SHA256 is a TLS 1.3 suite") && pr.Severity == "warning":
			warning = true
		}
	}
	if !router || !options || !warning {
		t.Errorf("problems %+v: router x %v, options broken %v, TLS 1.3 suite warning %v; want all", probs, router, options, warning)
	}
}
