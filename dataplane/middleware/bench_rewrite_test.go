package middleware

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// benchChain builds the named middlewares of yml around a handler that
// answers status with a small body.
func benchChain(b *testing.B, yml string, status int, names ...string) http.Handler {
	b.Helper()
	res := resolverFrom(b, yml)
	res.services["pages"] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("page"))
	})
	ms := make([]Middleware, 0, len(names))
	for _, n := range names {
		m, err := res.Middleware(context.Background(), n)
		if err != nil {
			b.Fatal(err)
		}
		ms = append(ms, m)
	}
	body := []byte("hello")
	return Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}), ms...)
}

// BenchmarkRewrites runs the path-rewriting and redirect middlewares that
// pass the request on (addPrefix, replacePath, replacePathRegex,
// stripPrefixRegex, a redirectScheme and a redirectRegex that do not
// match): their per-request cost.
func BenchmarkRewrites(b *testing.B) {
	h := benchChain(b, `
http:
  middlewares:
    add:  {addPrefix: {prefix: /v1}}
    rep:  {replacePath: {path: /api/users}}
    rre:  {replacePathRegex: {regex: "^/api/(.*)", replacement: "/x/$1"}}
    spr:  {stripPrefixRegex: {regex: ["/x/"]}}
    rs:   {redirectScheme: {scheme: http}}
    rr:   {redirectRegex: {regex: "^https://nowhere/(.*)", replacement: "https://else/$1"}}
`, http.StatusOK, "add", "rep", "rre", "spr", "rs", "rr")
	req := httptest.NewRequest(http.MethodGet, "/api/users?id=1", nil)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req.Clone(req.Context()))
	}
}

// BenchmarkCatchers runs errors and retry in front of a handler that
// answers 200 (passed through) and, in the caught case, 503 (errors page
// served, after retry gave up).
func BenchmarkCatchers(b *testing.B) {
	const yml = `
http:
  middlewares:
    pages: {errors: {status: ["500-599"], service: pages}}
    retry: {retry: {attempts: 2, status: ["500-599"]}}
`
	for _, tc := range []struct {
		name   string
		status int
	}{{"pass", http.StatusOK}, {"caught", http.StatusServiceUnavailable}} {
		b.Run(tc.name, func(b *testing.B) {
			h := benchChain(b, yml, tc.status, "pages", "retry")
			req := httptest.NewRequest(http.MethodGet, "/api/users?id=1", nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
}
