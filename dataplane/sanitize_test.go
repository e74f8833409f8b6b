package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

func TestSanitizePath(t *testing.T) {
	tests := []struct{ in, path, escaped string }{
		{"/admin/", "/admin/", "/admin/"},
		{"/x/../admin/", "/admin/", "/admin/"},
		{"//admin", "/admin", "/admin"},
		{"/a/./b", "/a/b", "/a/b"},
		{"/a/b/..", "/a", "/a"},
		{"/../../etc/passwd", "/etc/passwd", "/etc/passwd"},
		{"/%2e%2e/admin", "/admin", "/admin"},
		{"/a%2Fb/../c", "/c", "/c"}, // "a%2Fb" is one segment (RFC 3986 §5.2.4; Traefik's JoinPath)
		{"/public/%2E%2E%2Fadmin/users", "/public/../admin/users", "/public/..%2Fadmin/users"}, // case 025: not a dot-segment
		{"/public/%2e%2e/admin/users", "/admin/users", "/admin/users"},
		{"/gitlab/a%2fb", "/gitlab/a/b", "/gitlab/a%2fb"}, // case 024: as sent
		{"/a%2fb/./c", "/a/b/c", "/a%2fb/c"},
		{"/keep%2Fslash//x", "/keep/slash/x", "/keep%2Fslash/x"},
		{"/", "/", "/"},
	}
	for _, tt := range tests {
		u, err := url.ParseRequestURI(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		sanitizePath(u)
		if u.Path != tt.path || u.EscapedPath() != tt.escaped {
			t.Errorf("%s: got path %q escaped %q, want %q %q", tt.in, u.Path, u.EscapedPath(), tt.path, tt.escaped)
		}
	}
}

// A path with dot-segments must not reach a catch-all router past the one
// that guards /admin with basic auth (Traefik's sanitizePath, on by default).
func TestSanitizedPathCannotBypassAuth(t *testing.T) {
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secret at "+r.URL.Path)
	}))
	dyn := fmt.Sprintf(`
http:
  routers:
    admin@file: {rule: "Host(`+"`app.test`"+`) && PathPrefix(`+"`/admin`"+`)", service: s@file, middlewares: [auth@file]}
    all@file: {rule: "Host(`+"`app.test`"+`)", service: s@file}
  middlewares:
    auth@file: {basicAuth: {users: ["u:$apr1$H6uskkkW$IgXLP6ewTrSuBkTrqE8wj/"]}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL)
	off := false
	for _, tc := range []struct {
		name     string
		sanitize *bool
		want     int
	}{{"default", nil, http.StatusUnauthorized}, {"sanitizePath false", &off, http.StatusOK}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0", HTTP: &static.EntryHTTP{SanitizePath: tc.sanitize}}}, nil)
			h.Apply(dyn, generation.Options{})
			for _, p := range []string{"/x/../admin/", "//admin/", "/%2e%2e/admin/"} {
				c, err := net.Dial("tcp", h.Addr("web"))
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: app.test\r\nConnection: close\r\n\r\n", p)
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				c.Close()
				if err != nil {
					t.Fatal(err)
				}
				if p == "/%2e%2e/admin/" && tc.sanitize != nil {
					continue // unsanitized, Go's parser still decodes it: nothing to assert
				}
				if resp.StatusCode != tc.want {
					t.Errorf("%s: status %d, want %d", p, resp.StatusCode, tc.want)
				}
			}
		})
	}
}

// Plaintext HTTP/2 with prior knowledge (gRPC without TLS) is served, as by
// Traefik; h1 hands a connection that starts with the preface to net/http.
func TestH2CPriorKnowledge(t *testing.T) {
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	h := newHarness(t, nil, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://" + h.Addr("web") + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || string(b) != "ok" {
		t.Fatalf("got %s %q, want HTTP/2 ok", resp.Proto, b)
	}
}

// entryPoints.<ep>.http.encodedCharacters: denied escapes in either case.
func TestDeniedEncoded(t *testing.T) {
	f := false
	deny := (&static.EncodedCharacters{AllowEncodedSlash: &f, AllowEncodedHash: &f}).Denied()
	for esc, want := range map[string]bool{
		"/a%2Fb": true, "/a%2fb": true, "/a%23": true, "/a%3Fb": false, "/plain": false, "/a%": true, "/a%2": true, "/a%252F": false,
	} {
		if got := deniedEncoded(esc, deny); got != want {
			t.Errorf("deniedEncoded(%q, %v) = %v, want %v", esc, deny, got, want)
		}
	}
	if d := (&static.EncodedCharacters{}).Denied(); d != nil {
		t.Errorf("unset options deny %v; want every character allowed (Traefik's default)", d)
	}
}
