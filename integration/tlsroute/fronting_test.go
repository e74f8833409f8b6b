package tlsroute

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// front is a running gantry for the domain-fronting tests: entrypoint
// websecure (TCP and HTTP/3) with a wildcard certificate and these
// routers:
//
//	api  Host(api.example.com) && PathPrefix(/admin)  tls.options mtls (RequireAndVerifyClientCert)
//	b    Host(b.example.com)                          default options
//	a    Host(a.example.com)                          tls.options modern (minVersion TLS 1.3)
//	db   TCP HostSNI(db.example.com), passthrough to a TLS server of its own
type front struct {
	g    *harness.Gantry
	addr string // websecure
	api  string // the traefik entrypoint (API)
	pki  *pki
	pool *x509.CertPool
}

func startFront(t *testing.T) *front {
	t.Helper()
	p := newPKI(t)
	w := harness.StartWhoami(t, "fronting")
	db := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "db passthrough") }))
	t.Cleanup(db.Close)
	dyn := t.TempDir()
	harness.WriteFile(t, dyn, "dynamic.yml", fmt.Sprintf(`
http:
  routers:
    api: {rule: "Host(`+"`api.example.com`"+`) && PathPrefix(`+"`/admin`"+`)", entryPoints: [websecure], tls: {options: mtls}, service: s}
    b:   {rule: "Host(`+"`b.example.com`"+`)", entryPoints: [websecure], tls: {}, service: s}
    a:   {rule: "Host(`+"`a.example.com`"+`)", entryPoints: [websecure], tls: {options: modern}, service: s}
  services:
    s: {loadBalancer: {servers: [{url: "http://%s"}]}}
tcp:
  routers:
    db: {rule: "HostSNI(`+"`db.example.com`"+`)", entryPoints: [websecure], tls: {passthrough: true}, service: db}
  services:
    db: {loadBalancer: {servers: [{address: %q}]}}
tls:
  certificates:
    - {certFile: %q, keyFile: %q}
  options:
    mtls: {clientAuth: {caFiles: [%q], clientAuthType: RequireAndVerifyClientCert}}
    modern: {minVersion: VersionTLS13}
`, w, db.Listener.Addr().String(), p.serverCert, p.serverKey, p.caFile))
	g := harness.Start(t, fmt.Sprintf(`
entryPoints:
  websecure: {address: %q, http3: {}}
  traefik: {address: %q}
api: {insecure: true}
providers: {file: {directory: %q}}
log: {level: DEBUG}
`, harness.FreeAddr(t), harness.FreeAddr(t), dyn))
	g.WaitOutput(t, wait, "config applied")
	pool := x509.NewCertPool()
	ca, _ := os.ReadFile(p.caFile)
	pool.AppendCertsFromPEM(ca)
	return &front{g: g, addr: g.EntryPoints["websecure"], api: g.EntryPoints["traefik"], pki: p, pool: pool}
}

// tlsConf is a client configuration for SNI sni ("" sends none) trusting
// the test CA; cert, when set, is presented as client certificate.
func (f *front) tlsConf(sni string, cert *tls.Certificate, maxVersion uint16, protos ...string) *tls.Config {
	c := &tls.Config{ServerName: sni, RootCAs: f.pool, MaxVersion: maxVersion, NextProtos: protos}
	if sni == "" {
		// Go sends no SNI for an empty ServerName; gantry then presents
		// its default certificate, which a fronting client ignores.
		c.InsecureSkipVerify = true //nolint:gosec // no SNI, no name to verify
	}
	if cert != nil {
		c.Certificates = []tls.Certificate{*cert}
	}
	return c
}

// h1 sends one HTTP/1.1 request (Host host) on a new TLS connection with
// the given client configuration and returns the status.
func (f *front) h1(conf *tls.Config, host, path string) (int, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", f.addr, conf)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// h2 opens one HTTP/2 connection and sends one request per host on it, in
// order (a coalescing browser), returning the statuses.
func (f *front) h2(t *testing.T, conf *tls.Config, path string, hosts ...string) []int {
	t.Helper()
	conf = conf.Clone()
	conf.NextProtos = []string{"h2"}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", f.addr, conf)
	if err != nil {
		t.Fatalf("h2 dial: %v", err)
	}
	defer c.Close()
	cc, err := (&http2.Transport{}).NewClientConn(c)
	if err != nil {
		t.Fatalf("h2 client: %v", err)
	}
	var out []int
	for _, h := range hosts {
		req, _ := http.NewRequest("GET", "https://"+h+path, nil)
		resp, err := cc.RoundTrip(req)
		if err != nil {
			t.Fatalf("h2 %s%s: %v", h, path, err)
		}
		resp.Body.Close()
		out = append(out, resp.StatusCode)
	}
	return out
}

// h3 opens one HTTP/3 connection (quic-go) with conf's SNI and sends one
// request per host on it, in order, returning the statuses.
func (f *front) h3(t *testing.T, conf *tls.Config, path string, hosts ...string) []int {
	t.Helper()
	var conns int
	tr := &http3.Transport{TLSClientConfig: conf, Dial: func(ctx context.Context, _ string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
		conns++
		return quic.DialAddrEarly(ctx, f.addr, tc, qc)
	}}
	defer tr.Close()
	var out []int
	for _, h := range hosts {
		req, _ := http.NewRequest("GET", "https://"+f.addr+path, nil)
		req.Host = h
		ctx, cancel := context.WithTimeout(t.Context(), wait)
		resp, err := tr.RoundTrip(req.WithContext(ctx))
		if err != nil {
			cancel()
			t.Fatalf("h3 %s%s: %v", h, path, err)
		}
		resp.Body.Close()
		cancel()
		out = append(out, resp.StatusCode)
	}
	if conns != 1 {
		t.Errorf("h3: %d QUIC connections for %d requests, want 1", conns, len(hosts))
	}
	return out
}

// The repro: a router for api.example.com/admin requires a client
// certificate, b.example.com does not, one wildcard certificate covers
// both. Every way of reaching api's router over a connection whose SNI
// chose other TLS options is 421 Misdirected Request, on HTTP/1.1,
// HTTP/2 (also a second :authority on one connection) and HTTP/3; the
// legitimate requests still get 200.
func TestDomainFrontingIsMisdirected(t *testing.T) {
	f := startFront(t)
	client := &f.pki.client

	// Legitimate.
	if code, err := f.h1(f.tlsConf("api.example.com", client, 0), "api.example.com", "/admin"); err != nil || code != 200 {
		t.Errorf("api with its client certificate: %d %v, want 200", code, err)
	}
	if code, err := f.h1(f.tlsConf("b.example.com", nil, 0), "b.example.com", "/admin"); err != nil || code != 200 {
		t.Errorf("b: %d %v, want 200", code, err)
	}
	if _, err := f.h1(f.tlsConf("api.example.com", nil, 0), "api.example.com", "/admin"); err == nil {
		t.Errorf("api without a client certificate: the handshake succeeded")
	}
	if code, err := f.h1(f.tlsConf("a.example.com", nil, tls.VersionTLS13), "a.example.com", "/"); err != nil || code != 200 {
		t.Errorf("a over TLS 1.3: %d %v, want 200", code, err)
	}
	if _, err := f.h1(f.tlsConf("a.example.com", nil, tls.VersionTLS12), "a.example.com", "/"); err == nil {
		t.Errorf("a over TLS 1.2 (minVersion TLS 1.3): the handshake succeeded")
	}

	// Fronting over HTTP/1.1: SNI b or none, Host api (mTLS) or a
	// (minVersion TLS 1.3, the client capped at TLS 1.2).
	for _, c := range []struct {
		sni, host, path string
		max             uint16
	}{
		{"b.example.com", "api.example.com", "/admin", 0},
		{"b.example.com", "API.example.com.", "/admin", 0},
		{"", "api.example.com", "/admin", 0},
		{"b.example.com", "a.example.com", "/", tls.VersionTLS12},
		{"", "a.example.com", "/", tls.VersionTLS12},
		{"b.example.com", "db.example.com", "/", 0}, // a passthrough host over a terminated connection
	} {
		if code, err := f.h1(f.tlsConf(c.sni, nil, c.max), c.host, c.path); err != nil || code != http.StatusMisdirectedRequest {
			t.Errorf("HTTP/1.1 SNI %q Host %s%s: %d %v, want 421", c.sni, c.host, c.path, code, err)
		}
	}

	// HTTP/2 coalescing: one connection opened for b, then api, a and db.
	if got := f.h2(t, f.tlsConf("b.example.com", nil, 0), "/admin", "b.example.com", "api.example.com", "a.example.com", "db.example.com", "b.example.com"); fmt.Sprint(got) != "[200 421 421 421 200]" {
		t.Errorf("HTTP/2 on one connection b, api, a, db, b: %v, want [200 421 421 421 200]", got)
	}
	if got := f.h2(t, f.tlsConf("", nil, 0), "/admin", "api.example.com"); fmt.Sprint(got) != "[421]" {
		t.Errorf("HTTP/2 without SNI, api: %v, want [421]", got)
	}
	// A connection opened for api (with the certificate) serves api.
	if got := f.h2(t, f.tlsConf("api.example.com", client, 0), "/admin", "api.example.com", "b.example.com"); fmt.Sprint(got) != "[200 421]" {
		t.Errorf("HTTP/2 opened for api: api, b: %v, want [200 421]", got)
	}

	// HTTP/3 likewise, on one QUIC connection.
	if got := f.h3(t, f.tlsConf("b.example.com", nil, 0), "/admin", "b.example.com", "api.example.com", "a.example.com"); fmt.Sprint(got) != "[200 421 421]" {
		t.Errorf("HTTP/3 on one connection b, api, a: %v, want [200 421 421]", got)
	}
	if got := f.h3(t, f.tlsConf("API.Example.com", client, 0), "/admin", "api.example.com"); fmt.Sprint(got) != "[200]" {
		t.Errorf("HTTP/3 opened for API.Example.com with the certificate: %v, want [200]", got)
	}
}

// The same repro with curl and openssl s_client, the clients of the
// report.
func TestDomainFrontingWithCurlAndOpenSSL(t *testing.T) {
	for _, tool := range []string{"curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			harness.MissingTool(t, tool+" is not installed (Debian package "+tool+")")
		}
	}
	f := startFront(t)
	_, port, _ := net.SplitHostPort(f.addr)
	curl := func(args ...string) string {
		t.Helper()
		base := []string{"-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "30", "--cacert", f.pki.caFile,
			"--resolve", "b.example.com:" + port + ":127.0.0.1", "--resolve", "api.example.com:" + port + ":127.0.0.1"}
		out, _ := exec.Command("curl", append(base, args...)...).Output()
		return string(out)
	}
	for _, proto := range []string{"--http1.1", "--http2"} {
		if got := curl(proto, "-H", "Host: api.example.com", "https://b.example.com:"+port+"/admin"); got != "421" {
			t.Errorf("curl %s SNI b, Host api: %s, want 421", proto, got)
		}
		if got := curl(proto, "https://b.example.com:"+port+"/admin"); got != "200" {
			t.Errorf("curl %s b: %s, want 200", proto, got)
		}
		if got := curl(proto, "--cert", f.pki.clientCert, "--key", f.pki.clientKey, "https://api.example.com:"+port+"/admin"); got != "200" {
			t.Errorf("curl %s api with the client certificate: %s, want 200", proto, got)
		}
		// No SNI: curl sends none for an IP address.
		if got := curl(proto, "-k", "-H", "Host: api.example.com", "https://127.0.0.1:"+port+"/admin"); got != "421" {
			t.Errorf("curl %s no SNI, Host api: %s, want 421", proto, got)
		}
	}
	sclient := func(sni []string, host string) string {
		args := append([]string{"s_client", "-connect", f.addr, "-quiet", "-CAfile", f.pki.caFile}, sni...)
		cmd := exec.Command("openssl", args...)
		cmd.Stdin = strings.NewReader("GET /admin HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
		out, _ := cmd.Output()
		line, _, _ := strings.Cut(string(out), "\r\n")
		return line
	}
	if got := sclient([]string{"-servername", "b.example.com"}, "api.example.com"); got != "HTTP/1.1 421 Misdirected Request" {
		t.Errorf("openssl s_client SNI b, Host api: %q, want 421", got)
	}
	if got := sclient([]string{"-noservername"}, "api.example.com"); got != "HTTP/1.1 421 Misdirected Request" {
		t.Errorf("openssl s_client no SNI, Host api: %q, want 421", got)
	}
	if got := sclient([]string{"-servername", "b.example.com"}, "b.example.com"); got != "HTTP/1.1 200 OK" {
		t.Errorf("openssl s_client b: %q, want 200", got)
	}
}
