package middleware

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestErrorPages(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    pages@file:    {errors: {status: ["500-599", "404,410"], service: "pages@docker", query: "/{status}.html?from={url}"}}
    rewrite@file:  {errors: {status: ["500-599"], statusRewrites: {"502-504": 500}, service: "pages@docker", query: "/{status}-{originalStatus}.html"}}
    missing@file:  {errors: {status: ["500"], service: "nope@file"}}
    badrange@file: {errors: {status: ["5xx"], service: "pages@docker"}}
`)
	pagesBackend := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-Page", "yes")
		fmt.Fprintf(w, "page %s?%s method=%s", r.URL.Path, r.URL.RawQuery, r.Method)
	}))
	res.services["pages@docker"] = proxyTo(pagesBackend.URL)
	backend := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var code int
		_, _ = fmt.Sscanf(r.URL.Path, "/code/%d", &code)
		w.Header().Set("X-Backend", "1")
		w.Header().Set("Content-Length", "7")
		w.WriteHeader(code)
		_, _ = w.Write([]byte("backend"))
	}))
	mk := func(name string) string { return front(t, res, backend.URL, name).URL }
	pages, rewrite := mk("pages@file"), mk("rewrite@file")
	tests := []struct {
		srv, path, method string
		code              int
		body              string
		page              bool
	}{
		{pages, "/code/200", "GET", 200, "backend", false},
		{pages, "/code/404?q=1", "POST", 404, "page /404.html?from=" + url.QueryEscape(pages+"/code/404?q=1") + " ", true},
		{pages, "/code/503", "GET", 503, "page /503.html", true},
		{pages, "/code/418", "GET", 418, "backend", false},
		{pages, "/code/410", "GET", 410, "page /410.html", true},
		{rewrite, "/code/502", "GET", 500, "page /500-502.html", true},
		{rewrite, "/code/500", "GET", 500, "page /500-500.html", true},
	}
	for _, tt := range tests {
		resp, body := do(t, tt.method, tt.srv+tt.path, strings.NewReader("x"), nil)
		if resp.StatusCode != tt.code || !strings.HasPrefix(body, tt.body) {
			t.Errorf("%s: %d %q, want %d %q…", tt.path, resp.StatusCode, body, tt.code, tt.body)
		}
		if tt.page {
			if resp.Header.Get("X-Backend") != "" || resp.Header.Get("X-Page") != "yes" || !strings.HasSuffix(body, "method=GET") {
				t.Errorf("%s: page response headers %v body %q", tt.path, resp.Header, body)
			}
		}
	}
	if _, err := res.Middleware(t.Context(), "missing@file"); err == nil || !strings.Contains(err.Error(), `errors.service: "nope@file"`) {
		t.Errorf("missing service: %v", err)
	}
	if _, err := res.Middleware(t.Context(), "badrange@file"); err == nil || !strings.Contains(err.Error(), "errors.status[0]") {
		t.Errorf("bad range: %v", err)
	}
}
