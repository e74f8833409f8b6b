package dashboard

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// writeCert writes a self-signed certificate and key for host into dir.
func writeCert(t *testing.T, dir, host string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(4242), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(90 * 24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// family is one metric family as scraped: "name type labels [buckets]".
func describe(f *dto.MetricFamily) string {
	labels := map[string]bool{}
	var buckets []string
	for _, m := range f.Metric {
		for _, l := range m.Label {
			labels[l.GetName()] = true
		}
		if h := m.Histogram; h != nil && buckets == nil {
			for _, b := range h.Bucket {
				buckets = append(buckets, strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64))
			}
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range labels {
			if !yield(n) {
				return
			}
		}
	})
	l := strings.Join(names, ",")
	if l == "" {
		l = "-"
	}
	out := f.GetName() + " " + strings.ToLower(f.GetType().String()) + " " + l
	if buckets != nil {
		out += " " + strings.Join(buckets, ",")
	}
	return out
}

// TestMetricsMatchTraefikGolden: after a scripted mix (200s, a 404 with no
// router, HTTPS on a router with a file certificate, a request retried
// past a server that refuses connections, a WebSocket-style upgrade
// header, a PROPFIND) the traefik_* families on /metrics are exactly
// Traefik's documented list: names, types, label names and default
// buckets; and nothing else is scraped under traefik_. A scrape of
// prometheus@internal is not counted (metrics.addInternals defaults false).
func TestMetricsMatchTraefikGolden(t *testing.T) {
	dir := t.TempDir()
	backend := harness.StartWhoami(t, "golden")
	cert, key := writeCert(t, t.TempDir(), "secure.example")
	harness.WriteFile(t, dir, "dynamic.yml", fmt.Sprintf(`http:
  routers:
    plain:
      entryPoints: [web]
      rule: Host(`+"`plain.example`"+`)
      service: app
    secure:
      entryPoints: [websecure]
      rule: Host(`+"`secure.example`"+`)
      service: app
      tls: {}
    flaky:
      entryPoints: [web]
      rule: Host(`+"`flaky.example`"+`)
      service: flaky
  services:
    app:
      loadBalancer:
        healthCheck: {path: /health, interval: 1s}
        servers:
          - url: "http://%s"
    flaky:
      loadBalancer:
        servers:
          - url: "http://%s"
          - url: "http://%s"
tls:
  certificates:
    - certFile: %q
      keyFile: %q
`, backend, harness.DeadAddr(t), backend, cert, key))
	static := fmt.Sprintf(`entryPoints:
  web:
    address: "%s"
  websecure:
    address: "%s"
  traefik:
    address: "%s"
api:
  insecure: true
metrics:
  prometheus:
    addRoutersLabels: true
providers:
  providersThrottleDuration: 50ms
  file:
    directory: "%s"
`, harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t), dir)
	g := harness.Start(t, static)
	admin := g.URL(t, "traefik", "")
	harness.TryGet(t, 60*time.Second, admin+"/api/http/routers", harness.StatusIs(200), harness.BodyContains(`"name":"flaky@file"`))

	for range 5 {
		harness.TryGet(t, 60*time.Second, g.URL(t, "web", "/"), harness.Host("plain.example"), harness.StatusIs(200))
	}
	harness.TryGet(t, 60*time.Second, g.URL(t, "web", "/"), harness.Host("nobody.example"), harness.StatusIs(404))
	harness.TryGet(t, 60*time.Second, g.URL(t, "web", "/"), harness.Host("plain.example"), harness.Header("Accept", "text/event-stream"), harness.StatusIs(200))
	req, _ := http.NewRequest("PROPFIND", g.URL(t, "web", "/"), nil)
	req.Host = "plain.example"
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	// A bodyless request that meets the refusing server first is retried
	// on the other one: over 20 requests, some will.
	for range 20 {
		harness.TryGet(t, 60*time.Second, g.URL(t, "web", "/"), harness.Host("flaky.example"), harness.StatusIs(200))
	}
	secure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: "secure.example"}}, Timeout: 5 * time.Second}
	harness.Try(t, 60*time.Second, func() error {
		req, _ := http.NewRequest("GET", "https://"+strings.TrimPrefix(g.URL(t, "websecure", "/"), "http://"), nil)
		req.Host = "secure.example"
		resp, err := secure.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("https: %d", resp.StatusCode)
		}
		return nil
	})

	// Values worth pinning: the label values Traefik would write.
	value := func(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
		f := fams[name]
		if f == nil {
			return -1
		}
	next:
		for _, m := range f.Metric {
			for k, v := range labels {
				if !slices.ContainsFunc(m.Label, func(l *dto.LabelPair) bool { return l.GetName() == k && l.GetValue() == v }) {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			}
		}
		return -1
	}
	checks := []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"traefik_entrypoint_requests_total", map[string]string{"entrypoint": "web", "code": "404", "method": "GET", "protocol": "http"}, 1},
		{"traefik_entrypoint_requests_total", map[string]string{"entrypoint": "web", "code": "200", "method": "EXTENSION_METHOD"}, 1},
		{"traefik_router_requests_total", map[string]string{"router": "plain@file", "service": "app@file", "protocol": "sse"}, 1},
		{"traefik_service_requests_total", map[string]string{"service": "flaky@file", "code": "502"}, 1},
		{"traefik_service_retries_total", map[string]string{"service": "flaky@file"}, 1},
		{"traefik_entrypoint_requests_tls_total", map[string]string{"entrypoint": "websecure", "tls_version": "1.3", "tls_cipher": "TLS_AES_128_GCM_SHA256"}, 1},
		{"traefik_open_connections", map[string]string{"entrypoint": "web", "protocol": "TCP"}, 0},
		{"traefik_tls_certs_not_after", map[string]string{"cn": "secure.example", "serial": "4242", "sans": "secure.example"}, float64(time.Now().Add(89 * 24 * time.Hour).Unix())},
		{"traefik_config_reloads_total", nil, 1},
	}
	scrape := func() (map[string]*dto.MetricFamily, error) {
		r, err := harness.Get(admin + "/metrics")
		if err != nil {
			return nil, err
		}
		if r.StatusCode != 200 {
			return nil, fmt.Errorf("/metrics: status %d", r.StatusCode)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(strings.NewReader(r.Body))
		if err != nil {
			return nil, harness.Permanent(fmt.Errorf("parse /metrics: %w", err))
		}
		return fams, nil
	}
	// A request is counted after its response is written (as in Traefik):
	// the last ones may reach the counters after the client has its answer,
	// so the scrape is repeated until every pinned value is there.
	var fams map[string]*dto.MetricFamily
	harness.Try(t, 60*time.Second, func() error {
		var err error
		if fams, err = scrape(); err != nil {
			return err
		}
		for _, c := range checks {
			if v := value(fams, c.name, c.labels); v < c.min {
				return fmt.Errorf("%s%v = %v, want >= %v", c.name, c.labels, v, c.min)
			}
		}
		return nil
	})
	for range 3 { // scrape thrice more: the scrapes themselves must not be counted
		harness.Try(t, 60*time.Second, func() error {
			var err error
			fams, err = scrape()
			return err
		})
	}
	var got []string
	for name, f := range fams {
		if strings.HasPrefix(name, "traefik_") {
			got = append(got, describe(f))
		}
	}
	slices.Sort(got)
	var want []string
	gf, err := os.Open(filepath.Join("testdata", "traefik-metrics.golden"))
	if err != nil {
		t.Fatal(err)
	}
	defer gf.Close()
	sc := bufio.NewScanner(gf)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			want = append(want, line)
		}
	}
	slices.Sort(want)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing or different: want %s", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("not in Traefik's list: %s", g)
		}
	}
	for _, c := range checks {
		if v := value(fams, c.name, c.labels); v < c.min {
			t.Errorf("%s%v = %v, want >= %v", c.name, c.labels, v, c.min)
		}
	}
	for _, m := range fams["traefik_entrypoint_requests_total"].Metric {
		// The harness's readiness probe may get a 404 there (no router
		// matched: counted, as in Traefik); the API calls and scrapes, all
		// 200, must not be.
		if slices.ContainsFunc(m.Label, func(l *dto.LabelPair) bool { return l.GetName() == "entrypoint" && l.GetValue() == "traefik" }) &&
			slices.ContainsFunc(m.Label, func(l *dto.LabelPair) bool { return l.GetName() == "code" && l.GetValue() == "200" }) {
			t.Errorf("a request to the API or /metrics (internal services) is counted: %v", m)
		}
	}
	if fams["go_goroutines"] == nil || fams["process_start_time_seconds"] == nil {
		t.Error("Go runtime and process collectors missing (Traefik exposes them)")
	}
}
