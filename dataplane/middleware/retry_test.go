package middleware

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// countingProxy is a real reverse proxy whose dials are counted; the
// first failFirst dials are refused as by a server that is not up yet.
func countingProxy(target string, dials *atomic.Int32, failFirst int32) http.Handler {
	u, _ := url.Parse(target)
	d := &net.Dialer{}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) <= failFirst {
				return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
			}
			return d.DialContext(ctx, network, addr)
		}},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) { w.WriteHeader(http.StatusBadGateway) },
	}
}

func TestRetryThroughProxy(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	var hits atomic.Int32
	live := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/500":
			w.WriteHeader(http.StatusInternalServerError)
		case "/drop": // the backend got the request, then the connection dies
			conn, _, _ := http.NewResponseController(w).Hijack()
			_ = conn.Close()
		default:
			b, _ := io.ReadAll(r.Body)
			_, _ = w.Write(b)
		}
	}))
	m, err := newRetry(&config.Retry{Attempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		target    string
		path      string
		failFirst int32
		wantCode  int
		wantDials int32
		wantHits  int32
	}{
		{"unreachable: all attempts", deadURL, "/", 0, 502, 3, 0},
		{"refused twice, then up: body replayed", live.URL, "/", 2, 200, 3, 1},
		{"reached, 500: no retry", live.URL, "/500", 0, 500, 1, 1},
		{"reached, connection lost: no replay", live.URL, "/drop", 0, 502, 1, 1},
		{"ok", live.URL, "/", 0, 200, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dials atomic.Int32
			hits.Store(0)
			srv := newServer(t, m(countingProxy(tt.target, &dials, tt.failFirst)))
			resp, body := do(t, http.MethodPost, srv.URL+tt.path, strings.NewReader("body"), nil)
			if resp.StatusCode != tt.wantCode || dials.Load() != tt.wantDials || hits.Load() != tt.wantHits {
				t.Errorf("status %d dials %d hits %d, want %d %d %d", resp.StatusCode, dials.Load(), hits.Load(), tt.wantCode, tt.wantDials, tt.wantHits)
			}
			if tt.wantCode == 200 && body != "body" {
				t.Errorf("body %q", body)
			}
		})
	}
}

// failing answers 502 without the transport ever writing the request, as
// the proxy does on a dial error; it reads the body when read is set.
type failing struct {
	tries atomic.Int32
	read  bool
}

func (f *failing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.tries.Add(1)
	if f.read {
		_, _ = io.ReadAll(r.Body)
	}
	r.Header.Del("X-Keep") // an inner middleware editing headers
	w.Header().Set("X-Try", "discarded")
	w.WriteHeader(http.StatusBadGateway)
}

func TestRetryBackoffAndReplaySafety(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := newRetry(&config.Retry{Attempts: 4, InitialInterval: config.Duration(100 * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		f := &failing{}
		start := time.Now()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("X-Keep", "1")
		m(f).ServeHTTP(rec, req)
		// Waits 100ms, 200ms, then 200ms (capped at twice the initial interval).
		if f.tries.Load() != 4 || time.Since(start) != 500*time.Millisecond || rec.Code != 502 {
			t.Errorf("tries %d after %v code %d, want 4 after 500ms, 502", f.tries.Load(), time.Since(start), rec.Code)
		}
		if req.Header.Get("X-Keep") != "1" {
			t.Errorf("the original request's headers were edited")
		}
		// Answers other than 502, 503 and 504 are not retried.
		deny := &codes{}
		deny.code.Store(http.StatusUnauthorized)
		m(deny).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		if deny.hits.Load() != 1 {
			t.Errorf("a 401 was retried: %d tries", deny.hits.Load())
		}
		// A body that was read cannot be replayed: no retry.
		f2 := &failing{read: true}
		m(f2).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", strings.NewReader("data")))
		if f2.tries.Load() != 1 {
			t.Errorf("retried after reading the body: %d tries", f2.tries.Load())
		}
	})
	for _, bad := range []string{"{retry: {attempts: 0}}", "{retry: {attempts: 2, initialInterval: -1s}}"} {
		if err := buildErr(t, "http:\n  middlewares:\n    m: "+bad+"\n", "m"); err == nil || !strings.Contains(err.Error(), "middleware m: retry.") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
