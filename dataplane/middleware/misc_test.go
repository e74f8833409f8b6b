package middleware

import (
	"io"
	"net/http"
	"testing"
)

func TestContentType(t *testing.T) {
	backend := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // the backend sends no Content-Type
		_, _ = io.WriteString(w, "<html><body>hi</body></html>")
	}))
	res := resolverFrom(t, "http:\n  middlewares:\n    off: {contentType: {}}\n    on: {contentType: {autoDetect: true}}\n")
	off := newServer(t, mustBuild(t, res, "off")(backendOnly(backend.URL)))
	on := newServer(t, mustBuild(t, res, "on")(backendOnly(backend.URL)))
	tests := []struct {
		srv, path, want string
	}{
		{off.URL, "/", ""},
		{on.URL, "/", "text/html; charset=utf-8"},
	}
	for _, tt := range tests {
		resp, _ := do(t, http.MethodGet, tt.srv+tt.path, nil, nil)
		if got := resp.Header.Get("Content-Type"); got != tt.want {
			t.Errorf("%s%s: Content-Type %q, want %q", tt.srv, tt.path, got, tt.want)
		}
	}
}

// backendOnly is a proxy stage that copies the backend's answer without
// adding anything (httputil.ReverseProxy copies headers as they are).
func backendOnly(u string) http.Handler { return proxyTo(u) }

func mustBuild(t *testing.T, res *fakeResolver, name string) Middleware {
	t.Helper()
	m, err := res.Middleware(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEncodedCharacters(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    strict: {encodedCharacters: {}}
    slash:  {encodedCharacters: {allowEncodedSlash: true, allowEncodedPercent: true}}
`)
	be := echoBackend(t).URL
	strict := front(t, res, be, "strict")
	slash := front(t, res, be, "slash")
	tests := []struct {
		srv, path string
		code      int
	}{
		{strict.URL, "/a/b?x=%2F", 200}, // the query does not count
		{strict.URL, "/a%20b", 200},
		{strict.URL, "/a%2Fb", 400},
		{strict.URL, "/a%2fb", 400},
		{strict.URL, "/a%5Cb", 400},
		{strict.URL, "/a%00b", 400},
		{strict.URL, "/a%3Bb", 400},
		{strict.URL, "/a%25b", 400},
		{strict.URL, "/a%3Fb", 400},
		{strict.URL, "/a%23b", 400},
		{slash.URL, "/a%2Fb%25c", 200},
		{slash.URL, "/a%3Bb", 400},
	}
	for _, tt := range tests {
		resp, body := do(t, http.MethodGet, tt.srv+tt.path, nil, nil)
		if resp.StatusCode != tt.code {
			t.Errorf("%s: %d, want %d", tt.path, resp.StatusCode, tt.code)
		}
		if tt.code == 200 {
			if e := seen(t, body); e.RequestURI != tt.path {
				t.Errorf("%s: backend saw %q", tt.path, e.RequestURI)
			}
		}
	}
}

// autoDetect true undoes an inner layer's suppression of sniffing.
func TestContentTypeAutoDetectOverridesSuppression(t *testing.T) {
	res := resolverFrom(t, "http:\n  middlewares:\n    on: {contentType: {autoDetect: true}}\n")
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		_, _ = io.WriteString(w, "<html><body>hi</body></html>")
	})
	for name, h := range map[string]http.Handler{"without": inner, "with": mustBuild(t, res, "on")(inner)} {
		resp, _ := do(t, http.MethodGet, newServer(t, h).URL+"/", nil, nil)
		want := ""
		if name == "with" {
			want = "text/html; charset=utf-8"
		}
		if got := resp.Header.Get("Content-Type"); got != want {
			t.Errorf("%s autoDetect: %q, want %q", name, got, want)
		}
	}
}
