package middleware

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// authServer lets a request through when it carries "Authorization: ok",
// echoing what it received in X-Auth-Seen; otherwise it answers 302 to a
// relative login page or 401.
func authServer(t *testing.T) *httptest.Server {
	return newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen, _ := json.Marshal(map[string]any{"method": r.Method, "header": r.Header, "body": string(body)})
		w.Header().Set("X-Auth-Seen", string(seen))
		switch r.Header.Get("Authorization") {
		case "ok":
			w.Header().Set("X-Auth-User", "alice")
			w.Header().Set("X-Auth-Role", "admin")
			w.Header().Set("X-Other", "no")
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1"})
			http.SetCookie(w, &http.Cookie{Name: "ignored", Value: "i"})
			w.WriteHeader(http.StatusOK)
		case "redirect":
			w.Header().Set("Location", "/login?next=x")
			w.WriteHeader(http.StatusFound)
		default:
			w.Header().Set("WWW-Authenticate", "Bearer")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte("denied by auth"))
		}
	}))
}

func TestForwardAuth(t *testing.T) {
	as := authServer(t)
	res := resolverFrom(t, `
http:
  middlewares:
    fa:
      forwardAuth:
        address: `+as.URL+`/verify
        authResponseHeaders: [X-Auth-User]
        authResponseHeadersRegex: "^X-Auth-R"
        addAuthCookiesToResponse: [session]
    trusting:
      forwardAuth:
        address: `+as.URL+`/verify
        trustForwardHeader: true
        authRequestHeaders: [Authorization]
        forwardBody: true
        maxBodySize: 10
        preserveRequestMethod: true
`)
	be := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "from-backend"})
		http.SetCookie(w, &http.Cookie{Name: "app", Value: "a"})
		b, _ := io.ReadAll(r.Body)
		_ = json.NewEncoder(w).Encode(echo{Header: r.Header, Body: string(b), RequestURI: r.RequestURI})
	}))
	fa := front(t, res, be.URL, "fa")

	// Granted: headers copied to the request, cookies merged into the response.
	resp, body := do(t, http.MethodGet, fa.URL+"/app?x=1", nil, withHeader("Authorization", "ok", "X-Auth-User", "spoofed", "X-Auth-Rogue", "spoofed", "X-Forwarded-Uri", "/spoofed", "Host", "app.example"))
	if resp.StatusCode != 200 {
		t.Fatalf("granted: status %d", resp.StatusCode)
	}
	e := seen(t, body)
	if e.Header.Get("X-Auth-User") != "alice" || e.Header.Get("X-Auth-Role") != "admin" || e.Header.Get("X-Auth-Rogue") != "" || e.Header.Get("X-Other") != "" {
		t.Errorf("backend headers %v", e.Header)
	}
	var cookies []string
	for _, c := range resp.Cookies() {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	if strings.Join(cookies, ";") != "app=a;session=s1" {
		t.Errorf("cookies %v, want app=a and the auth server's session", cookies)
	}

	// Denied: the auth server's answer goes back to the client.
	resp, body = do(t, http.MethodGet, fa.URL+"/app", nil, nil)
	if resp.StatusCode != 401 || body != "denied by auth" || resp.Header.Get("Www-Authenticate") != "Bearer" {
		t.Errorf("denied: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	var authSaw struct {
		Method string
		Header http.Header
	}
	_ = json.Unmarshal([]byte(resp.Header.Get("X-Auth-Seen")), &authSaw)
	if authSaw.Method != "GET" || authSaw.Header.Get("X-Forwarded-Uri") != "/app" || authSaw.Header.Get("X-Forwarded-Method") != "GET" ||
		authSaw.Header.Get("X-Forwarded-For") != "127.0.0.1" || authSaw.Header.Get("X-Forwarded-Proto") != "http" {
		t.Errorf("auth server saw %+v", authSaw)
	}

	// Redirect: a relative Location is made absolute against the auth address.
	resp, _ = do(t, http.MethodGet, fa.URL+"/app", nil, withHeader("Authorization", "redirect"))
	if resp.StatusCode != 302 || resp.Header.Get("Location") != as.URL+"/login?next=x" {
		t.Errorf("redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	// trustForwardHeader, authRequestHeaders, forwardBody, preserveRequestMethod.
	tr := front(t, res, be.URL, "trusting")
	resp, _ = do(t, http.MethodPost, tr.URL+"/up", strings.NewReader("0123456789"), withHeader("Authorization", "nope", "X-Forwarded-Uri", "/orig", "X-Forwarded-For", "203.0.113.5", "Cookie", "c=1"))
	_ = json.Unmarshal([]byte(resp.Header.Get("X-Auth-Seen")), &authSaw)
	var full struct{ Body string }
	_ = json.Unmarshal([]byte(resp.Header.Get("X-Auth-Seen")), &full)
	if authSaw.Method != "POST" || full.Body != "0123456789" || authSaw.Header.Get("X-Forwarded-Uri") != "/orig" ||
		authSaw.Header.Get("X-Forwarded-For") != "203.0.113.5, 127.0.0.1" || authSaw.Header.Get("Cookie") != "" {
		t.Errorf("trusting auth server saw %+v body %q", authSaw, full.Body)
	}
	resp, body = do(t, http.MethodPost, tr.URL+"/up", strings.NewReader("0123456789"), withHeader("Authorization", "ok"))
	if resp.StatusCode != 200 || seen(t, body).Body != "0123456789" {
		t.Errorf("body not restored for the backend: %d %q", resp.StatusCode, body)
	}
	resp, _ = do(t, http.MethodPost, tr.URL+"/up", strings.NewReader("01234567890"), withHeader("Authorization", "ok"))
	if resp.StatusCode != 401 {
		t.Errorf("body over maxBodySize: %d, want 401", resp.StatusCode)
	}
}

func TestForwardAuthUnreachableAndBadConfig(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	addr := dead.URL
	dead.Close()
	res := resolverFrom(t, "http:\n  middlewares:\n    fa: {forwardAuth: {address: "+addr+"}}\n")
	srv := front(t, res, echoBackend(t).URL, "fa")
	resp, _ := do(t, http.MethodGet, srv.URL+"/", nil, nil)
	if resp.StatusCode != 500 {
		t.Errorf("unreachable auth server: %d, want 500", resp.StatusCode)
	}
	for yml, want := range map[string]string{
		`{forwardAuth: {}}`:                     "forwardAuth.address: empty",
		`{forwardAuth: {address: "not a url"}}`: "forwardAuth.address:",
		`{forwardAuth: {address: "http://a", authResponseHeadersRegex: "("}}`:  "forwardAuth.authResponseHeadersRegex:",
		`{forwardAuth: {address: "http://a", tls: {ca: /nonexistent/ca.pem}}}`: "forwardAuth.tls.ca:",
		`{forwardAuth: {address: "http://a", tls: {cert: /x.pem}}}`:            "forwardAuth.tls: cert and key",
	} {
		if err := buildErr(t, "http:\n  middlewares:\n    m: "+yml+"\n", "m"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", yml, err, want)
		}
	}
}
