package middleware

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// serveThrough runs one request through middleware c in front of next.
func serveThrough(t *testing.T, c *config.Middleware, next http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	m, err := New(context.Background(), "m@test", c, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	m(next).ServeHTTP(rec, req)
	return rec
}

func TestReplacePrefixTable(t *testing.T) {
	// Gateway API HTTPPathModifier.ReplacePrefixMatch examples.
	for _, tc := range []struct{ path, prefix, repl, want string }{
		{"/foo/bar", "/foo", "/xyz", "/xyz/bar"},
		{"/foo/bar", "/foo", "/xyz/", "/xyz/bar"},
		{"/foo/bar", "/foo/", "/xyz", "/xyz/bar"},
		{"/foo/bar", "/foo/", "/xyz/", "/xyz/bar"},
		{"/foo", "/foo", "/xyz", "/xyz"},
		{"/foo/", "/foo", "/xyz", "/xyz/"},
		{"/foo/bar", "/foo", "", "/bar"},
		{"/foo/", "/foo", "", "/"},
		{"/foo", "/foo", "", "/"},
		{"/foo/", "/foo", "/", "/"},
		{"/foo", "/foo", "/", "/"},
		{"/foo/bar", "/", "/xyz", "/xyz/foo/bar"},
	} {
		if got := replacePrefix(tc.path, tc.prefix, tc.repl); got != tc.want {
			t.Errorf("replacePrefix(%q, %q, %q) = %q, want %q", tc.path, tc.prefix, tc.repl, got, tc.want)
		}
	}
}

func TestHeaderModifiers(t *testing.T) {
	var got http.Header
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Server", "backend")
		w.Header().Add("X-Multi", "a")
		w.WriteHeader(201)
	})
	req := httptest.NewRequest("GET", "http://a/", nil)
	req.Header.Set("X-Set", "old")
	req.Header.Set("x-add", "first")
	req.Header.Set("X-Remove", "gone")
	hm := &config.HeaderModifier{Set: map[string]string{"x-set": "new"}, Add: map[string]string{"X-Add": "second", "X-New": "v"}, Remove: []string{"x-remove"}}
	serveThrough(t, &config.Middleware{RequestHeaderModifier: hm}, next, req)
	if got.Get("X-Set") != "new" || !slices.Equal(got["X-Add"], []string{"first", "second"}) || got.Get("X-New") != "v" || got.Get("X-Remove") != "" {
		t.Errorf("request headers %v", got)
	}

	rec := serveThrough(t, &config.Middleware{ResponseHeaderModifier: &config.HeaderModifier{
		Set: map[string]string{"Server": "gantry"}, Add: map[string]string{"X-Multi": "b"}, Remove: []string{"X-Nope"}}}, next, httptest.NewRequest("GET", "http://a/", nil))
	if rec.Code != 201 || rec.Header().Get("Server") != "gantry" || !slices.Equal(rec.Header()["X-Multi"], []string{"a", "b"}) {
		t.Errorf("response %d %v", rec.Code, rec.Header())
	}

	if _, err := New(context.Background(), "m@test", &config.Middleware{RequestHeaderModifier: &config.HeaderModifier{Set: map[string]string{"Bad Name": "x"}}}, nil); err == nil {
		t.Error("a header name with a space was accepted")
	}
}

func TestRequestRedirect(t *testing.T) {
	never := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("the redirect reached the backend") })
	for _, tc := range []struct {
		name string
		c    config.RequestRedirect
		url  string
		code int
		loc  string
	}{
		{"default 302, listener port 80 omitted", config.RequestRedirect{Hostname: "example.org", Port: 80}, "http://a.example:80/p?q=1", 302, "http://example.org/p?q=1"},
		{"scheme https drops the port", config.RequestRedirect{Scheme: "https", StatusCode: 301}, "http://a.example:8080/p", 301, "https://a.example/p"},
		{"explicit port kept", config.RequestRedirect{Port: 8083}, "http://a.example/p", 302, "http://a.example:8083/p"},
		{"https on 443 omitted", config.RequestRedirect{Scheme: "https", Port: 443}, "http://a.example/", 302, "https://a.example/"},
		{"full path", config.RequestRedirect{Path: new("/new"), StatusCode: 308}, "http://a.example/old/x", 308, "http://a.example/new"},
		{"prefix", config.RequestRedirect{PathPrefix: new("/v2"), PathMatch: "/v1", StatusCode: 303}, "http://a.example/v1/users?id=3", 303, "http://a.example/v2/users?id=3"},
	} {
		rec := serveThrough(t, &config.Middleware{RequestRedirect: &tc.c}, never, httptest.NewRequest("GET", tc.url, nil))
		if rec.Code != tc.code || rec.Header().Get("Location") != tc.loc {
			t.Errorf("%s: %d %q, want %d %q", tc.name, rec.Code, rec.Header().Get("Location"), tc.code, tc.loc)
		}
	}
	if _, err := New(context.Background(), "m@test", &config.Middleware{RequestRedirect: &config.RequestRedirect{StatusCode: 200}}, nil); err == nil {
		t.Error("statusCode 200 was accepted")
	}
}

func TestURLRewrite(t *testing.T) {
	var host, path, uri string
	next := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { host, path, uri = r.Host, r.URL.Path, r.RequestURI })
	serveThrough(t, &config.Middleware{URLRewrite: &config.URLRewrite{Hostname: "internal.svc", PathPrefix: new("/"), PathMatch: "/app"}}, next,
		httptest.NewRequest("GET", "http://a.example/app/x?y=1", nil))
	if host != "internal.svc" || path != "/x" || uri != "/x?y=1" {
		t.Errorf("host %q path %q uri %q", host, path, uri)
	}
	serveThrough(t, &config.Middleware{URLRewrite: &config.URLRewrite{Path: new("/full")}}, next, httptest.NewRequest("GET", "http://a.example/app/x", nil))
	if path != "/full" || host != "a.example" {
		t.Errorf("full path: host %q path %q", host, path)
	}
}
