package middleware

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Case 027: redirectScheme behind a TLS-terminating load balancer. The
// dataplane has already removed X-Forwarded-Proto from untrusted peers, so
// request 6 of the case (untrusted peer) arrives here without the header.
func TestRedirectSchemeCase027(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    to-https:      {redirectScheme: {scheme: https, permanent: true}}
    to-https-temp: {redirectScheme: {scheme: https}}
    to-https-port: {redirectScheme: {scheme: https, port: "8443", permanent: true}}
`)
	be := echoBackend(t)
	perm := front(t, res, be.URL, "to-https")
	temp := front(t, res, be.URL, "to-https-temp")
	port := front(t, res, be.URL, "to-https-port")
	tests := []struct {
		name     string
		srv      string
		method   string
		path     string
		xfp      string
		upgrade  bool
		wantCode int
		wantLoc  string
	}{
		{"1 https via LB", perm.URL, "GET", "/a?b=1", "https", false, 200, ""},
		{"2 http via LB", perm.URL, "GET", "/a?b=1", "http", false, 301, "https://app.example.com/a?b=1"},
		{"3 POST http", perm.URL, "POST", "/a", "http", false, 308, "https://app.example.com/a"},
		{"5 ws upgrade", perm.URL, "GET", "/socket", "ws", true, 301, "https://app.example.com/socket"},
		{"6 untrusted peer (header stripped)", perm.URL, "GET", "/a?b=1", "", false, 301, "https://app.example.com/a?b=1"},
		{"case-insensitive HTTPS", perm.URL, "GET", "/a", "HTTPS", false, 200, ""},
		{"temporary GET", temp.URL, "GET", "/a?b=1", "http", false, 302, "https://app.example.com/a?b=1"},
		{"temporary PUT", temp.URL, "PUT", "/a", "http", false, 307, "https://app.example.com/a"},
		{"port", port.URL, "GET", "/a?b=1", "http", false, 301, "https://app.example.com:8443/a?b=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _ := do(t, tt.method, tt.srv+tt.path, nil, func(r *http.Request) {
				r.Host = "app.example.com"
				if tt.xfp != "" {
					r.Header.Set("X-Forwarded-Proto", tt.xfp)
				}
				if tt.upgrade {
					r.Header.Set("Connection", "Upgrade")
					r.Header.Set("Upgrade", "websocket")
				}
			})
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantCode)
			}
			if got := resp.Header.Get("Location"); got != tt.wantLoc {
				t.Errorf("Location %q, want %q", got, tt.wantLoc)
			}
		})
	}
}

// Case 027 request 4: a wss upgrade behind the LB is not redirected; the
// upgrade is proxied and the backend's 101 reaches the client.
func TestRedirectSchemeWebSocketUpgradeProxied(t *testing.T) {
	res := resolverFrom(t, "http:\n  middlewares:\n    to-https: {redirectScheme: {scheme: https, permanent: true}}\n")
	ws := wsBackend(t)
	srv := front(t, res, ws.URL, "to-https")
	upgrade(t, srv, "X-Forwarded-Proto: wss\r\n")
}

// wsBackend accepts a WebSocket-style upgrade and sends "hello".
func wsBackend(t *testing.T) *httptest.Server {
	return newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "want upgrade", http.StatusBadRequest)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nhello")
		_ = brw.Flush()
	}))
}

// upgrade sends an upgrade request to srv and expects 101 then "hello".
func upgrade(t *testing.T, srv *httptest.Server, extraHeaders string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("GET /socket HTTP/1.1\r\nHost: app.example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" + extraHeaders + "\r\n"))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want 101", resp.StatusCode)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("read %q, %v after upgrade", buf, err)
	}
	return resp
}

// Upgrades pass through every middleware that wraps the response writer.
func TestUpgradeThroughWrappingMiddlewares(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    hdr:   {headers: {customResponseHeaders: {X-Std: "1"}}}
    errs:  {errors: {status: ["500-599"], service: pages}}
    retry: {retry: {attempts: 2}}
    gz:    {compress: {}}
    cb:    {circuitBreaker: {expression: "NetworkErrorRatio() > 0.5"}}
    buf:   {buffering: {}}
    ct:    {contentType: {}}
    ifr:   {inFlightReq: {amount: 5}}
`)
	res.services["pages"] = http.NotFoundHandler()
	srv := front(t, res, wsBackend(t).URL, "hdr", "errs", "retry", "gz", "cb", "buf", "ct", "ifr")
	upgrade(t, srv, "Accept-Encoding: gzip\r\n")
}

// Case 023: users add a redirectRegex for the nginx-like trailing slash.
func TestRedirectRegex(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    slash:      {redirectRegex: {regex: "^(https?://[^/]+/app)$", replacement: "${1}/"}}
    slash-perm: {redirectRegex: {regex: "^(https?://[^/]+/app)$", replacement: "${1}/", permanent: true}}
`)
	be := echoBackend(t)
	tmp := front(t, res, be.URL, "slash")
	perm := front(t, res, be.URL, "slash-perm")
	tests := []struct {
		srv, method, path, xfp string
		code                   int
		loc                    string
	}{
		{tmp.URL, "GET", "/app", "", 302, "http://example.com/app/"},
		{tmp.URL, "POST", "/app", "", 307, "http://example.com/app/"},
		{perm.URL, "GET", "/app", "", 301, "http://example.com/app/"},
		{perm.URL, "PUT", "/app", "", 308, "http://example.com/app/"},
		{perm.URL, "GET", "/app", "https", 301, "https://example.com/app/"},
		{perm.URL, "GET", "/app/", "", 200, ""},
	}
	for _, tt := range tests {
		resp, _ := do(t, tt.method, tt.srv+tt.path, nil, withHeader("Host", "example.com", "X-Forwarded-Proto", tt.xfp))
		if resp.StatusCode != tt.code || resp.Header.Get("Location") != tt.loc {
			t.Errorf("%s %s xfp=%q: %d %q, want %d %q", tt.method, tt.path, tt.xfp, resp.StatusCode, resp.Header.Get("Location"), tt.code, tt.loc)
		}
	}
}

func TestRedirectSchemeBadConfig(t *testing.T) {
	for yml, want := range map[string]string{
		`{redirectScheme: {}}`:                         "redirectScheme.scheme: empty",
		`{redirectScheme: {scheme: https, port: "x"}}`: "redirectScheme.port:",
	} {
		err := buildErr(t, "http:\n  middlewares:\n    r: "+yml+"\n", "r")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", yml, err, want)
		}
	}
}
