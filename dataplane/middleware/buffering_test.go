package middleware

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func TestBuffering(t *testing.T) {
	var hits atomic.Int32
	backend := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/big":
			_, _ = io.WriteString(w, strings.Repeat("x", 200))
		case "/flaky":
			if n%3 != 0 {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			_, _ = io.WriteString(w, "ok:"+string(b))
		default:
			w.Header().Set("X-Len", r.Header.Get("Content-Length"))
			_, _ = w.Write(b)
		}
	}))
	res := resolverFrom(t, `
http:
  middlewares:
    b:     {buffering: {maxRequestBodyBytes: 10, memRequestBodyBytes: 4, maxResponseBodyBytes: 100, memResponseBodyBytes: 8}}
    retry: {buffering: {retryExpression: "IsNetworkError() && Attempts() < 3"}}
`)
	b := front(t, res, backend.URL, "b")
	tests := []struct {
		name, path, body string
		chunked          bool
		code             int
		want             string
	}{
		{"fits, spills to file", "/", "0123456789", false, 200, "0123456789"},
		{"chunked gets a length", "/", "abcdef", true, 200, "abcdef"},
		{"request too large", "/", "0123456789A", false, 413, ""},
		{"chunked request too large", "/", "0123456789A", true, 413, ""},
		{"response too large", "/big", "", false, 500, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tt.body)
			if tt.chunked {
				body = io.MultiReader(strings.NewReader(tt.body)) // unknown length
			}
			resp, got := do(t, http.MethodPost, b.URL+tt.path, body, nil)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.code)
			}
			if tt.code == 200 {
				if got != tt.want || resp.Header.Get("X-Len") != strconv.Itoa(len(tt.want)) || resp.ContentLength != int64(len(tt.want)) {
					t.Errorf("body %q X-Len %q length %d", got, resp.Header.Get("X-Len"), resp.ContentLength)
				}
			}
		})
	}
	hits.Store(0)
	r := front(t, res, backend.URL, "retry")
	resp, got := do(t, http.MethodPost, r.URL+"/flaky", strings.NewReader("payload"), nil)
	if resp.StatusCode != 200 || got != "ok:payload" || hits.Load() != 3 {
		t.Errorf("retry: %d %q after %d tries, want 200 ok:payload after 3", resp.StatusCode, got, hits.Load())
	}
	if err := buildErr(t, "http:\n  middlewares:\n    m: {buffering: {retryExpression: \"Attempts( <\"}}\n", "m"); err == nil || !strings.Contains(err.Error(), "buffering.retryExpression") {
		t.Errorf("bad expression: %v", err)
	}
}
