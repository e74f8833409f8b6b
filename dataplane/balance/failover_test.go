package balance

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// failoverPair returns a failover over a main that answers mainStatus
// (with a header and a body the client must never see when it is caught)
// and a fallback that echoes the request body.
func failoverPair(t testing.TB, mainStatus int, maxBody *int64) http.Handler {
	t.Helper()
	main := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("X-From", "main")
		w.WriteHeader(mainStatus)
		_, _ = w.Write([]byte("main"))
	})
	fallback := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-From", "fallback")
		_, _ = w.Write(append([]byte("fallback:"), b...))
	})
	h, err := NewFailover(main, fallback, &config.Failover{Errors: &config.FailoverErrors{Status: []string{"500-599"}, MaxRequestBodyBytes: maxBody}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestFailoverOnStatus(t *testing.T) {
	small := int64(4)
	for _, tc := range []struct {
		name       string
		mainStatus int
		maxBody    *int64
		body       string
		wantFrom   string
		wantBody   string
		wantStatus int
	}{
		{"passed through", http.StatusOK, nil, "abc", "main", "main", http.StatusOK},
		{"caught, body replayed", http.StatusBadGateway, nil, "abc", "fallback", "fallback:abc", http.StatusOK},
		{"body over the limit: main's answer kept", http.StatusBadGateway, &small, "abcdefgh", "main", "main", http.StatusBadGateway},
		{"body at the limit: replayed", http.StatusBadGateway, &small, "abcd", "fallback", "fallback:abcd", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := failoverPair(t, tc.mainStatus, tc.maxBody)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body)))
			if rec.Code != tc.wantStatus || rec.Body.String() != tc.wantBody || rec.Header().Get("X-From") != tc.wantFrom {
				t.Fatalf("got %d %q from %q, want %d %q from %q", rec.Code, rec.Body.String(), rec.Header().Get("X-From"), tc.wantStatus, tc.wantBody, tc.wantFrom)
			}
		})
	}
}

// nopWriter is a ResponseWriter that keeps nothing.
type nopWriter struct{ h http.Header }

func (d *nopWriter) Header() http.Header         { return d.h }
func (d *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *nopWriter) WriteHeader(int)             {}

// BenchmarkFailover measures a failover with errors.status whose main
// answers 200 (passed through) or 503 (replayed to the fallback).
func BenchmarkFailover(b *testing.B) {
	for _, tc := range []struct {
		name   string
		status int
	}{{"pass", http.StatusOK}, {"caught", http.StatusServiceUnavailable}} {
		b.Run(tc.name, func(b *testing.B) {
			h := failoverPair(b, tc.status, nil)
			w := &nopWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", strings.NewReader("body")))
			}
		})
	}
}
