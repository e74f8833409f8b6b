package middleware

import (
	"net/http"
	"strings"
	"testing"
)

func TestHeadersCustom(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    h:
      headers:
        customRequestHeaders: {X-Env: prod, X-Remove-Me: "", Host: rewritten.example}
        customResponseHeaders: {X-Std: "1", Server: ""}
        frameDeny: true
        contentTypeNosniff: true
        browserXssFilter: true
        contentSecurityPolicy: "default-src 'self'"
        referrerPolicy: no-referrer
        permissionsPolicy: "camera=()"
        stsSeconds: 31536000
        stsIncludeSubdomains: true
        stsPreload: true
        sslProxyHeaders: {X-Forwarded-Proto: https}
`)
	be := echoBackend(t)
	srv := front(t, res, be.URL, "h")
	resp, body := do(t, http.MethodGet, srv.URL+"/", nil, withHeader("X-Remove-Me", "secret", "X-Forwarded-Proto", "https"))
	e := seen(t, body)
	if e.Header.Get("X-Env") != "prod" || e.Header.Get("X-Remove-Me") != "" || e.Host != "rewritten.example" {
		t.Errorf("backend saw X-Env=%q X-Remove-Me=%q Host=%q", e.Header.Get("X-Env"), e.Header.Get("X-Remove-Me"), e.Host)
	}
	want := map[string]string{
		"X-Std":                     "1",
		"Server":                    "",
		"X-Frame-Options":           "DENY",
		"X-Content-Type-Options":    "nosniff",
		"X-Xss-Protection":          "1; mode=block",
		"Content-Security-Policy":   "default-src 'self'",
		"Referrer-Policy":           "no-referrer",
		"Permissions-Policy":        "camera=()",
		"Strict-Transport-Security": "max-age=31536000; includeSubDomains; preload",
	}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("response %s = %q, want %q", k, got, v)
		}
	}
	// Plain http (no SSL proxy header): no HSTS.
	resp, _ = do(t, http.MethodGet, srv.URL+"/", nil, nil)
	if got := resp.Header.Get("Strict-Transport-Security"); got != "" {
		t.Errorf("HSTS on plain http: %q", got)
	}
}

func TestHeadersCORS(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    cors:
      headers:
        accessControlAllowMethods: [GET, OPTIONS, PUT]
        accessControlAllowHeaders: [X-Custom]
        accessControlAllowOriginList: ["https://a.example"]
        accessControlAllowOriginListRegex: ["^https://.*\\.b\\.example$"]
        accessControlExposeHeaders: [X-Exposed]
        accessControlMaxAge: 100
        accessControlAllowCredentials: true
        addVaryHeader: true
`)
	be := echoBackend(t)
	srv := front(t, res, be.URL, "cors")
	tests := []struct {
		name, method, origin string
		preflight            bool
		wantOrigin           string
		wantBackend          bool
	}{
		{"preflight allowed", "OPTIONS", "https://a.example", true, "https://a.example", false},
		{"preflight regex", "OPTIONS", "https://x.b.example", true, "https://x.b.example", false},
		{"preflight denied origin", "OPTIONS", "https://evil.example", true, "", false},
		{"actual allowed", "GET", "https://a.example", false, "https://a.example", true},
		{"actual denied", "GET", "https://evil.example", false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, tt.method, srv.URL+"/", nil, func(r *http.Request) {
				r.Header.Set("Origin", tt.origin)
				if tt.preflight {
					r.Header.Set("Access-Control-Request-Method", "PUT")
				}
			})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tt.wantOrigin {
				t.Errorf("Allow-Origin %q, want %q", got, tt.wantOrigin)
			}
			if got := strings.Contains(body, `"Method"`); got != tt.wantBackend {
				t.Errorf("reached backend = %v, want %v", got, tt.wantBackend)
			}
			if tt.preflight {
				if resp.Header.Get("Access-Control-Allow-Methods") != "GET,OPTIONS,PUT" || resp.Header.Get("Access-Control-Max-Age") != "100" || resp.Header.Get("Access-Control-Allow-Headers") != "X-Custom" ||
					resp.Header.Get("Access-Control-Expose-Headers") != "X-Exposed" {
					t.Errorf("preflight headers %v", resp.Header)
				}
			} else {
				if resp.Header.Get("Access-Control-Expose-Headers") != "X-Exposed" || resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
					t.Errorf("response CORS headers %v", resp.Header)
				}
				if tt.wantOrigin != "" && resp.Header.Get("Vary") != "Origin" {
					t.Errorf("Vary %q, want Origin", resp.Header.Get("Vary"))
				}
			}
		})
	}
}

// TestHeadersCORSWildcards: a "*" (origin, methods, headers, exposed
// headers) means every value without credentials; with credentials a
// browser takes "*" literally, so the origin, the requested method and
// headers are echoed and a "*" expose list is left out (Fetch standard,
// Gateway API HTTPCORSFilter, Traefik's headers middleware).
func TestHeadersCORSWildcards(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    creds:
      headers:
        accessControlAllowOriginList: ["*"]
        accessControlAllowMethods: ["*"]
        accessControlAllowHeaders: ["*"]
        accessControlExposeHeaders: ["*"]
        accessControlAllowCredentials: true
    open:
      headers:
        accessControlAllowOriginList: ["*"]
        accessControlAllowMethods: ["*"]
        accessControlAllowHeaders: ["*"]
        accessControlExposeHeaders: ["*"]
`)
	be := echoBackend(t)
	creds, open := front(t, res, be.URL, "creds"), front(t, res, be.URL, "open")
	preflight := func(r *http.Request) {
		r.Header.Set("Origin", "https://app.example:8443")
		r.Header.Set("Access-Control-Request-Method", "PATCH")
		r.Header.Set("Access-Control-Request-Headers", "x-a, x-b")
	}
	actual := func(r *http.Request) { r.Header.Set("Origin", "https://app.example:8443") }
	tests := []struct {
		name string
		url  string
		pre  bool
		want map[string]string // "" is absent
	}{
		{"preflight with credentials", creds.URL, true, map[string]string{
			"Access-Control-Allow-Origin": "https://app.example:8443", "Access-Control-Allow-Methods": "PATCH",
			"Access-Control-Allow-Headers": "x-a, x-b", "Access-Control-Allow-Credentials": "true", "Access-Control-Expose-Headers": ""}},
		{"actual with credentials", creds.URL, false, map[string]string{
			"Access-Control-Allow-Origin": "https://app.example:8443", "Access-Control-Allow-Credentials": "true", "Access-Control-Expose-Headers": ""}},
		{"preflight without credentials", open.URL, true, map[string]string{
			"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "*", "Access-Control-Allow-Headers": "*",
			"Access-Control-Allow-Credentials": "", "Access-Control-Expose-Headers": "*"}},
		{"actual without credentials", open.URL, false, map[string]string{
			"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "", "Access-Control-Expose-Headers": "*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, opt := http.MethodGet, actual
			if tt.pre {
				method, opt = http.MethodOptions, preflight
			}
			resp, _ := do(t, method, tt.url+"/", nil, opt)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			for k, v := range tt.want {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestHeadersAllowedHosts(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    hosts: {headers: {allowedHosts: [good.example], hostsProxyHeaders: [X-Forwarded-Host]}}
    dev:   {headers: {allowedHosts: [good.example], isDevelopment: true}}
`)
	be := echoBackend(t)
	hosts := front(t, res, be.URL, "hosts")
	dev := front(t, res, be.URL, "dev")
	tests := []struct {
		srv  string
		mod  func(*http.Request)
		code int
	}{
		{hosts.URL, withHeader("Host", "good.example"), 200},
		{hosts.URL, withHeader("Host", "bad.example"), 500},
		{hosts.URL, withHeader("Host", "bad.example", "X-Forwarded-Host", "good.example"), 200},
		{dev.URL, withHeader("Host", "bad.example"), 200},
	}
	for i, tt := range tests {
		resp, _ := do(t, http.MethodGet, tt.srv+"/", nil, tt.mod)
		if resp.StatusCode != tt.code {
			t.Errorf("%d: status %d, want %d", i, resp.StatusCode, tt.code)
		}
	}
	if err := buildErr(t, "http:\n  middlewares:\n    h: {headers: {accessControlAllowOriginListRegex: ['(']}}\n", "h"); err == nil || !strings.Contains(err.Error(), "headers.accessControlAllowOriginListRegex[0]") {
		t.Errorf("bad regexp: %v", err)
	}
}

func TestHeadersRemovesBackendHeader(t *testing.T) {
	res := resolverFrom(t, "http:\n  middlewares:\n    h: {headers: {customResponseHeaders: {Server: \"\"}}}\n")
	srv := front(t, res, echoBackend(t).URL, "h")
	resp, _ := do(t, http.MethodGet, srv.URL+"/", nil, nil)
	if _, ok := resp.Header["Server"]; ok {
		t.Errorf("Server header kept: %q", resp.Header.Get("Server"))
	}
}

// A handler that writes nothing still gets the response headers on its
// implicit 200; an upgraded (hijacked) connection gets nothing written.
func TestHeadersOnImplicitResponse(t *testing.T) {
	res := resolverFrom(t, "http:\n  middlewares:\n    h: {headers: {customResponseHeaders: {X-Std: \"1\"}}}\n")
	m := mustBuild(t, res, "h")
	srv := newServer(t, m(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	resp, _ := do(t, http.MethodGet, srv.URL+"/", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-Std") != "1" {
		t.Errorf("implicit 200: %d %v", resp.StatusCode, resp.Header)
	}
}
