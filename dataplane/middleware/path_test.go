package middleware

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// Case 023: StripPrefix is a plain string prefix, keeps a leading "/",
// preserves the query, adds X-Forwarded-Prefix and never redirects.
func TestStripPrefixCase023(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    strip-app:   {stripPrefix: {prefixes: ["/app"]}}
    strip-tools: {stripPrefix: {prefixes: ["/tools/"]}}
    multi:       {stripPrefix: {prefixes: ["/a", "/a/b"]}}
`)
	be := echoBackend(t)
	app := front(t, res, be.URL, "strip-app")
	tools := front(t, res, be.URL, "strip-tools")
	multi := front(t, res, be.URL, "multi")
	tests := []struct {
		srv        string
		path       string
		wantURI    string
		wantPrefix string
	}{
		{app.URL, "/app", "/", "/app"},
		{app.URL, "/app/", "/", "/app"},
		{app.URL, "/app/x/y?q=1", "/x/y?q=1", "/app"},
		{app.URL, "/application", "/lication", "/app"},
		{tools.URL, "/tools/", "/", "/tools/"},
		{tools.URL, "/tools/x", "/x", "/tools/"},
		{app.URL, "/other", "/other", ""},
		{multi.URL, "/a/b/c", "/b/c", "/a"}, // first match in list order, only one
		{app.URL, "/app/a%2Fb", "/a%2Fb", "/app"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := do(t, http.MethodGet, tt.srv+tt.path, nil, withHeader("X-Forwarded-Prefix", "/spoofed"))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200 (no implicit redirect)", resp.StatusCode)
			}
			e := seen(t, body)
			if e.RequestURI != tt.wantURI {
				t.Errorf("backend saw %q, want %q", e.RequestURI, tt.wantURI)
			}
			want := tt.wantPrefix
			if want == "" {
				want = "/spoofed" // untouched when nothing is stripped
			}
			if got := e.Header.Get("X-Forwarded-Prefix"); got != want {
				t.Errorf("X-Forwarded-Prefix %q, want %q", got, want)
			}
		})
	}
}

func TestStripPrefixRegex(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    s: {stripPrefixRegex: {regex: ["/foo/[a-z0-9]+/", "/bar/"]}}
`)
	srv := front(t, res, echoBackend(t).URL, "s")
	tests := []struct{ path, uri, prefix string }{
		{"/foo/abc/x?y=1", "/x?y=1", "/foo/abc/"},
		{"/bar/baz", "/baz", "/bar/"},
		{"/x/foo/abc/", "/x/foo/abc/", ""}, // must match at the start
	}
	for _, tt := range tests {
		_, body := do(t, http.MethodGet, srv.URL+tt.path, nil, nil)
		e := seen(t, body)
		if e.RequestURI != tt.uri || e.Header.Get("X-Forwarded-Prefix") != tt.prefix {
			t.Errorf("%s: backend saw %q prefix %q, want %q %q", tt.path, e.RequestURI, e.Header.Get("X-Forwarded-Prefix"), tt.uri, tt.prefix)
		}
	}
}

func TestAddPrefixReplacePath(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    add:  {addPrefix: {prefix: "/api"}}
    add2: {addPrefix: {prefix: "v1"}}
    rp:   {replacePath: {path: "/fixed"}}
    rpr:  {replacePathRegex: {regex: "^/old/(.*)", replacement: "/new/$1"}}
`)
	be := echoBackend(t).URL
	tests := []struct {
		mw, path, uri, replaced string
	}{
		{"add", "/users?id=1", "/api/users?id=1", ""},
		{"add2", "/users", "/v1/users", ""},
		{"rp", "/anything?q=2", "/fixed?q=2", "/anything"},
		{"rpr", "/old/a/b?z=1", "/new/a/b?z=1", "/old/a/b"},
		{"rpr", "/other", "/other", ""},
	}
	for _, tt := range tests {
		srv := front(t, res, be, tt.mw)
		_, body := do(t, http.MethodGet, srv.URL+tt.path, nil, nil)
		e := seen(t, body)
		if e.RequestURI != tt.uri {
			t.Errorf("%s %s: backend saw %q, want %q", tt.mw, tt.path, e.RequestURI, tt.uri)
		}
		if got := e.Header.Get("X-Replaced-Path"); got != tt.replaced {
			t.Errorf("%s %s: X-Replaced-Path %q, want %q", tt.mw, tt.path, got, tt.replaced)
		}
	}
}

func TestPathBadConfig(t *testing.T) {
	tests := []struct{ yml, want string }{
		{`{stripPrefixRegex: {regex: ["/ok", "(unclosed"]}}`, "middleware bad: stripPrefixRegex.regex[1]: bad regexp"},
		{`{stripPrefix: {prefixes: []}}`, "middleware bad: stripPrefix.prefixes: empty"},
		{`{addPrefix: {prefix: ""}}`, "middleware bad: addPrefix.prefix: empty"},
		{`{replacePathRegex: {regex: "a(", replacement: "/"}}`, "middleware bad: replacePathRegex.regex: bad regexp"},
		{`{redirectRegex: {regex: "[", replacement: "/"}}`, "middleware bad: redirectRegex.regex: bad regexp"},
	}
	for _, tt := range tests {
		err := buildErr(t, "http:\n  middlewares:\n    bad: "+tt.yml+"\n", "bad")
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want prefix %q", tt.yml, err, tt.want)
		}
	}
}

// Case 025: a rewritten path with a dot-segment or an empty segment is
// answered 400, never forwarded; reserved escapes keep segments whole.
func TestRewriteThatClimbsIsRefused(t *testing.T) {
	for esc, want := range map[string]bool{
		"/../x": true, "/./x": true, "//x": true, "/a/..": true, "/x/../../y": true,
		"/x": false, "/": false, "": false, "/..%2Fx": false, "/a%2F..%2Fb": false, "/x/": false, "/...": false, "/..x": false,
	} {
		if got := climbs(esc); got != want {
			t.Errorf("climbs(%q) = %v, want %v", esc, got, want)
		}
	}
	strip, err := newStripPrefix(&config.StripPrefix{Prefixes: []string{"/public"}})
	if err != nil {
		t.Fatal(err)
	}
	reached := false
	h := strip(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	for target, code := range map[string]int{"/public../x": 400, "/public/x": 200, "/public./x": 400} {
		reached = false
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code != code || reached != (code == 200) {
			t.Errorf("GET %s: %d (forwarded %v), want %d", target, rec.Code, reached, code)
		}
	}
}
