package middleware

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"testing/synctest"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"net/http"
	"strings"
	"testing"
)

func TestBasicAuth(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    auth:
      basicAuth:
        users: ["alice:{SHA}hWK/nKq6ApDFwwVB9GNyLi7WBzM=", "inline:{SHA}hWK/nKq6ApDFwwVB9GNyLi7WBzM="]
        usersFile: testdata/users.htpasswd
        headerField: X-WebAuth-User
        removeHeader: true
    realm: {basicAuth: {users: ["inline:{SHA}hWK/nKq6ApDFwwVB9GNyLi7WBzM="], realm: "My Realm"}}
`)
	be := echoBackend(t).URL
	srv := front(t, res, be, "auth")
	tests := []struct {
		user, pass string
		ok         bool
	}{
		{"alice", "s3cret", true},  // APR1 from the file (the file wins over users)
		{"alice", "sha1pw", false}, // the inline entry for alice is overridden
		{"carol", "s3cret", true},  // MD5-crypt $1$
		{"dave", "sha1pw", true},   // {SHA}
		{"erin", "bcryptpw", true}, // bcrypt $2y$
		{"erin", "wrong", false},
		{"inline", "sha1pw", true},
		{"nobody", "x", false},
		{"", "", false},
	}
	for _, tt := range tests {
		resp, body := do(t, http.MethodGet, srv.URL+"/", nil, func(r *http.Request) {
			if tt.user != "" {
				r.SetBasicAuth(tt.user, tt.pass)
			}
		})
		if !tt.ok {
			if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="traefik"` {
				t.Errorf("%s/%s: %d %q, want 401 with challenge", tt.user, tt.pass, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
			continue
		}
		if resp.StatusCode != 200 {
			t.Errorf("%s: status %d", tt.user, resp.StatusCode)
			continue
		}
		e := seen(t, body)
		if e.Header.Get("X-Webauth-User") != tt.user || e.Header.Get("Authorization") != "" {
			t.Errorf("%s: backend saw user %q authorization %q", tt.user, e.Header.Get("X-Webauth-User"), e.Header.Get("Authorization"))
		}
	}
	srv2 := front(t, res, be, "realm")
	resp, body := do(t, http.MethodGet, srv2.URL+"/", nil, func(r *http.Request) { r.SetBasicAuth("inline", "sha1pw") })
	if resp.StatusCode != 200 || seen(t, body).Header.Get("Authorization") == "" {
		t.Errorf("without removeHeader the backend should get Authorization")
	}
	resp, _ = do(t, http.MethodGet, srv2.URL+"/", nil, nil)
	if got := resp.Header.Get("WWW-Authenticate"); got != `Basic realm="My Realm"` {
		t.Errorf("realm challenge %q", got)
	}
}

func TestBasicAuthBadConfig(t *testing.T) {
	tests := []struct{ yml, want string }{
		{`{basicAuth: {usersFile: testdata/missing.htpasswd}}`, "middleware m: basicAuth.usersFile: open testdata/missing.htpasswd"},
		{`{basicAuth: {users: ["nocolon"]}}`, "middleware m: basicAuth.users[0]: want user:hash"},
		{`{basicAuth: {users: ["u:plaintext"]}}`, "middleware m: basicAuth.users[0]: user u: unsupported hash format"},
		{`{basicAuth: {}}`, "middleware m: basicAuth.users: no users"},
		{`{digestAuth: {users: ["u:traefik:nothex"]}}`, "middleware m: digestAuth.users[0]: user u: hash is not 32 hex digits"},
		{`{digestAuth: {usersFile: /nonexistent/file}}`, "middleware m: digestAuth.usersFile:"},
	}
	for _, tt := range tests {
		err := buildErr(t, "http:\n  middlewares:\n    m: "+tt.yml+"\n", "m")
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: %v, want prefix %q", tt.yml, err, tt.want)
		}
	}
}

func TestMD5CryptVectors(t *testing.T) {
	// Produced by `openssl passwd -apr1 -salt sAlT1234 s3cret` and `openssl passwd -1 -salt abcdefgh s3cret`.
	for _, h := range []string{"$apr1$sAlT1234$xlQ/aymWGsxS3LsJd9A42.", "$1$abcdefgh$7.vq19w/w3Vm.hk1FOA7Q/"} {
		if !passwordHash(h).match("s3cret") || passwordHash(h).match("s3cret2") {
			t.Errorf("%s does not verify", h)
		}
	}
}

// digestResponse computes an RFC 7616 client response (MD5, qop=auth).
func digestResponse(challenge, user, realm, pass, method, uri string) string {
	p := parseDigest(challenge)
	h := func(s string) string { s2 := md5.Sum([]byte(s)); return hex.EncodeToString(s2[:]) }
	ha1 := h(user + ":" + realm + ":" + pass)
	resp := h(ha1 + ":" + p["nonce"] + ":00000001:abc:auth:" + h(method+":"+uri))
	return fmt.Sprintf(`Digest username="%s", realm="%s", nonce="%s", uri="%s", qop=auth, nc=00000001, cnonce="abc", response="%s", opaque="%s", algorithm=MD5`,
		user, realm, p["nonce"], uri, resp, p["opaque"])
}

func TestDigestAuth(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    d: {digestAuth: {usersFile: testdata/users.htdigest, headerField: X-User, removeHeader: true}}
`)
	srv := front(t, res, echoBackend(t).URL, "d")
	resp, _ := do(t, http.MethodGet, srv.URL+"/p?q=1", nil, nil)
	ch := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != 401 || !strings.HasPrefix(ch, `Digest realm="traefik"`) || !strings.Contains(ch, `qop="auth"`) {
		t.Fatalf("challenge %d %q", resp.StatusCode, ch)
	}
	tests := []struct {
		user, pass, uri string
		ok              bool
	}{
		{"bob", "digestpw", "/p?q=1", true},
		{"bob", "wrong", "/p?q=1", false},
		{"bob", "digestpw", "/other", false}, // uri must be the request's
		{"eve", "digestpw", "/p?q=1", false},
	}
	for _, tt := range tests {
		resp, body := do(t, http.MethodGet, srv.URL+"/p?q=1", nil, withHeader("Authorization", digestResponse(ch, tt.user, "traefik", tt.pass, "GET", tt.uri)))
		if (resp.StatusCode == 200) != tt.ok {
			t.Errorf("%+v: status %d", tt, resp.StatusCode)
			continue
		}
		if tt.ok {
			e := seen(t, body)
			if e.Header.Get("X-User") != "bob" || e.Header.Get("Authorization") != "" {
				t.Errorf("backend saw %v", e.Header)
			}
		}
	}
	// A forged nonce is refused.
	forged := strings.Replace(ch, `nonce="`, `nonce="AAAA`, 1)
	resp, _ = do(t, http.MethodGet, srv.URL+"/p?q=1", nil, withHeader("Authorization", digestResponse(forged, "bob", "traefik", "digestpw", "GET", "/p?q=1")))
	if resp.StatusCode != 401 {
		t.Errorf("forged nonce: %d", resp.StatusCode)
	}
}

// An expired nonce gets a new challenge marked stale (RFC 7616 §3.3).
func TestDigestNonceExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := newDigestAuth(&config.DigestAuth{Users: []string{"bob:traefik:79efdd7ab3fb860bfa6b1c634e0dcce5"}})
		if err != nil {
			t.Fatal(err)
		}
		h := m(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		serve := func(auth string) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/", nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			h.ServeHTTP(rec, req)
			return rec
		}
		auth := digestResponse(serve("").Header().Get("WWW-Authenticate"), "bob", "traefik", "digestpw", "GET", "/")
		if c := serve(auth).Code; c != 200 {
			t.Fatalf("fresh nonce: %d", c)
		}
		time.Sleep(digestNonceTTL + time.Second)
		rec := serve(auth)
		if rec.Code != 401 || !strings.HasSuffix(rec.Header().Get("WWW-Authenticate"), "stale=true") {
			t.Errorf("expired nonce: %d %q", rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
	})
}
