package middleware

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// BenchmarkChain runs a 5-middleware chain (headers, stripPrefix,
// rateLimit, ipAllowList, compress with a client that accepts no
// encoding) in front of a handler that writes a small body: the cost the
// middlewares add to one request.
func BenchmarkChain(b *testing.B) {
	res := resolverFrom(b, `
http:
  middlewares:
    hdr:   {headers: {customRequestHeaders: {X-Env: prod}, customResponseHeaders: {X-Std: "1"}, frameDeny: true}}
    strip: {stripPrefix: {prefixes: [/api]}}
    rl:    {rateLimit: {average: 1000000000, burst: 1000000000}}
    allow: {ipAllowList: {sourceRange: [192.0.2.0/24]}}
    gz:    {compress: {}}
`)
	ms := make([]Middleware, 0, 5)
	for _, n := range []string{"hdr", "strip", "rl", "allow", "gz"} {
		m, err := res.Middleware(context.Background(), n)
		if err != nil {
			b.Fatal(err)
		}
		ms = append(ms, m)
	}
	body := []byte("hello")
	h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}), ms...)
	req := httptest.NewRequest(http.MethodGet, "/api/users?id=1", nil) // RemoteAddr 192.0.2.1
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}
