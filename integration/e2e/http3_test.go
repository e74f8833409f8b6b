package e2e

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// redirectTo sends every request to addr, the URL's host kept as Host.
type redirectTo struct {
	rt   http.RoundTripper
	addr string
}

func (d redirectTo) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.Host = r.URL.Host
	r2.URL.Host = d.addr
	return d.rt.RoundTrip(r2)
}

// HTTP/3 through the binary: entryPoints.h3.http3 serves the routing table
// over QUIC; an HTTP/3 client (quic-go) and an HTTP/2 client get the same
// answers for routed, unrouted and TLS-only hosts, and the TCP side
// advertises h3 with Alt-Svc.
func TestHTTP3ThroughGantry(t *testing.T) {
	w := harness.StartWhoami(t, "h3")
	dir := t.TempDir()
	aCert, aKey := writeCert(t, dir, "a.test", 1)
	p := startProxy(t, map[string]string{"h3": ""}, "", fmt.Sprintf(`
http:
  routers:
    a:    {rule: "Host(`+"`a.test`"+`)", service: s, entryPoints: [h3], tls: {}}
    api:  {rule: "Host(`+"`a.test`"+`) && PathPrefix(`+"`/api`"+`)", service: s, entryPoints: [h3], tls: {}, middlewares: [strip]}
    plain: {rule: "Host(`+"`plain.test`"+`)", service: s, entryPoints: [h3]}
  middlewares:
    strip: {stripPrefix: {prefixes: [/api]}}
  services:
    s: {loadBalancer: {servers: [{url: "http://%s"}]}}
tls:
  certificates:
    - {certFile: %q, keyFile: %q}
`, w, aCert, aKey))
	addr := p.EntryPoints["h3"]
	_, port, _ := net.SplitHostPort(addr)
	conf := &tls.Config{ServerName: "a.test", InsecureSkipVerify: true} //nolint:gosec // self-signed test certificate
	h3t := &http3.Transport{TLSClientConfig: conf}
	defer h3t.Close()
	clients := map[string]*http.Client{
		"HTTP/2.0": {Transport: redirectTo{rt: &http2.Transport{TLSClientConfig: conf}, addr: addr}},
		"HTTP/3.0": {Transport: redirectTo{rt: h3t, addr: addr}},
	}
	type answer struct {
		code int
		line string
	}
	answers := map[string]map[string]answer{}
	for proto, c := range clients {
		answers[proto] = map[string]answer{}
		for _, path := range []string{"/x?y=1", "/api/v1", "/missing-host"} {
			host := "a.test"
			if path == "/missing-host" {
				host = "nothing.test"
			}
			resp, err := c.Get("https://" + host + path)
			if err != nil {
				t.Fatalf("%s %s%s: %v", proto, host, path, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.Proto != proto {
				t.Errorf("%s client answered over %s", proto, resp.Proto)
			}
			if proto == "HTTP/2.0" && resp.Header.Get("Alt-Svc") != fmt.Sprintf(`h3=":%s"; ma=2592000`, port) {
				t.Errorf("HTTP/2 answer Alt-Svc %q", resp.Header.Get("Alt-Svc"))
			}
			answers[proto][path] = answer{resp.StatusCode, parseEcho(string(b)).requestLine}
		}
	}
	for path, a2 := range answers["HTTP/2.0"] {
		if a3 := answers["HTTP/3.0"][path]; a3 != a2 {
			t.Errorf("%s: HTTP/3 %+v, HTTP/2 %+v", path, a3, a2)
		}
	}
	if a := answers["HTTP/3.0"]["/api/v1"]; a.code != 200 || a.line != "GET /v1 HTTP/1.1" {
		t.Errorf("HTTP/3 through a middleware: %+v", a)
	}
}
