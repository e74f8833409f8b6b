package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// hopBackend answers with the request headers it received as JSON and
// with hop-by-hop response fields, one of them named by its Connection.
func hopBackend(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "X-Resp-Hop")
		w.Header().Set("X-Resp-Hop", "backend-private")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("Proxy-Connection", "keep-alive")
		w.Header().Set("X-Resp-Kept", "yes")
		_ = json.NewEncoder(w).Encode(r.Header)
	}))
	t.Cleanup(s.Close)
	return s
}

// Case 028 on every protocol a client can use (HTTP/1.1 plain and over
// TLS, HTTP/2 over TLS and h2c): a client's Connection list cannot remove
// a middleware-added header nor the proxy's X-Forwarded-*/X-Real-Ip; the
// fields it names (and Connection, Keep-Alive, a lone Upgrade) are not
// forwarded; TE: trailers is; the backend's Connection-listed and
// hop-by-hop response fields do not reach the client. (The mechanism is
// the engine's, issue 12; this test pins it through the binary.)
func TestConnectionHeaderCannotStripHeaders(t *testing.T) {
	be := hopBackend(t)
	cert, key := writeCert(t, t.TempDir(), "api.example.com", 1)
	p := startProxy(t, map[string]string{"web": "", "websecure": ""}, "", fmt.Sprintf(`
http:
  routers:
    api:  {rule: "Host(`+"`api.example.com`"+`)", service: s, middlewares: [set-user], entryPoints: [web]}
    apis: {rule: "Host(`+"`api.example.com`"+`)", service: s, middlewares: [set-user], entryPoints: [websecure], tls: {}}
  middlewares:
    set-user:
      headers:
        customRequestHeaders:
          X-Internal-Auth: gateway
  services:
    s:
      loadBalancer:
        servers: [{url: %q}]
tls:
  certificates:
    - {certFile: %q, keyFile: %q}
`, be.URL, cert, key))
	web, websecure := p.EntryPoints["web"], p.EntryPoints["websecure"]

	const attack = "GET / HTTP/1.1\r\nHost: api.example.com\r\n" +
		"Connection: keep-alive, X-Forwarded-Host, X-Real-Ip, X-Internal-Auth, X-Custom\r\n" +
		"X-Custom: foo\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\nUpgrade: h2c\r\n\r\n"
	raw := func(c net.Conn) (http.Header, http.Header) {
		t.Helper()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, attack); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got http.Header
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatalf("status %d: %v", resp.StatusCode, err)
		}
		return got, resp.Header
	}
	check := func(proto string, got, respHdr http.Header, connectionSent bool) {
		t.Helper()
		for k, want := range map[string]string{"X-Internal-Auth": "gateway", "X-Forwarded-Host": "api.example.com", "X-Real-Ip": "127.0.0.1", "X-Forwarded-For": "127.0.0.1"} {
			if v := got.Get(k); v != want {
				t.Errorf("%s: backend got %s %q, want %q", proto, k, v, want)
			}
		}
		for _, k := range []string{"X-Forwarded-Proto", "X-Forwarded-Port", "X-Forwarded-Server"} {
			if got.Get(k) == "" {
				t.Errorf("%s: backend got no %s", proto, k)
			}
		}
		if connectionSent {
			for _, k := range []string{"X-Custom", "Connection", "Keep-Alive", "Upgrade"} {
				if v, ok := got[k]; ok {
					t.Errorf("%s: client hop-by-hop %s: %q forwarded", proto, k, v)
				}
			}
			if v := got.Get("Te"); v != "trailers" {
				t.Errorf("%s: TE %q forwarded, want trailers", proto, v)
			}
		}
		for _, k := range []string{"X-Resp-Hop", "Keep-Alive", "Proxy-Connection"} {
			if v, ok := respHdr[k]; ok {
				t.Errorf("%s: backend hop-by-hop response field %s: %q relayed", proto, k, v)
			}
		}
		if respHdr.Get("X-Resp-Kept") != "yes" {
			t.Errorf("%s: end-to-end response field lost: %v", proto, respHdr)
		}
	}

	// HTTP/1.1, plain.
	c, err := net.DialTimeout("tcp", web, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got, hdr := raw(c)
	check("HTTP/1.1", got, hdr, true)

	// HTTP/1.1 over TLS.
	tc, err := tls.Dial("tcp", websecure, &tls.Config{ServerName: "api.example.com", InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	got, hdr = raw(tc)
	check("HTTP/1.1 over TLS", got, hdr, true)

	// HTTP/2 (TLS, and h2c with prior knowledge): a Connection field is
	// malformed in HTTP/2 (RFC 9113 §8.2.2), so the client cannot name
	// fields; the middleware's and the proxy's fields still arrive, and
	// the backend's hop-by-hop response fields are not relayed.
	h2get := func(proto string, tr *http2.Transport, url string) {
		req, _ := http.NewRequest("GET", url, nil)
		req.Host = "api.example.com"
		req.Header.Set("X-Custom", "foo")
		req.Header.Set("TE", "trailers")
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		defer resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Fatalf("%s: answered over %s", proto, resp.Proto)
		}
		var got http.Header
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatalf("%s: status %d: %v", proto, resp.StatusCode, err)
		}
		check(proto, got, resp.Header, false)
		if got.Get("X-Custom") != "foo" {
			t.Errorf("%s: an end-to-end request field was lost", proto)
		}
	}
	h2get("HTTP/2 over TLS", &http2.Transport{TLSClientConfig: &tls.Config{ServerName: "api.example.com", InsecureSkipVerify: true}}, "https://"+websecure+"/")
	h2get("h2c", &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}, "http://"+web+"/")
}
