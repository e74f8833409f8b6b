package middleware

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// countingProxy is a real reverse proxy whose dials are counted; the
// first failFirst dials are refused as by a server that is not up yet. It
// reports to the retry Attempt as package dataplane's forwarding does.
func countingProxy(target string, dials *atomic.Int32, failFirst int32) http.Handler {
	u, _ := url.Parse(target)
	d := &net.Dialer{}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) <= failFirst {
				return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
			}
			return d.DialContext(ctx, network, addr)
		}},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "dial" {
				AttemptOf(w).NothingSent()
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		AttemptOf(w).Reached()
		rp.ServeHTTP(w, r)
	})
}

// recorder is a backend that logs what it received: one line per request
// with the method, path and a hash of the body. /flaky answers 503 (with
// a Set-Cookie) for its first fail requests, then 200.
type recorder struct {
	mu   sync.Mutex
	got  []string
	fail int
}

func (b *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.got = append(b.got, fmt.Sprintf("%s %s %x", r.Method, r.URL.Path, sha256.Sum256(body)))
	n := len(b.got)
	b.mu.Unlock()
	switch {
	case r.URL.Path == "/drop": // the request arrived, then the connection dies
		conn, _, _ := http.NewResponseController(w).Hijack()
		_ = conn.Close()
	case r.URL.Path == "/flaky" && n <= b.fail:
		w.Header().Set("Set-Cookie", "attempt="+strconv.Itoa(n))
		w.WriteHeader(http.StatusServiceUnavailable)
	default:
		w.Header().Set("X-Final", "yes")
		_, _ = w.Write(body)
	}
}

func (b *recorder) log() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.got)
}

// Network errors (case 040): retried only when the dial failed, for any
// method, with the same body.
func TestRetryNetworkErrors(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	be := &recorder{}
	live := newServer(t, be)
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
		wantHits  int
	}{
		{"unreachable: all attempts", deadURL, "/", 0, 502, 3, 0},
		{"refused twice, then up: body replayed", live.URL, "/", 2, 200, 3, 1},
		{"reached, 503: no status retry configured", live.URL, "/flaky", 0, 503, 1, 1},
		{"reached, connection lost: no replay", live.URL, "/drop", 0, 502, 1, 1},
		{"ok", live.URL, "/", 0, 200, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dials atomic.Int32
			be.mu.Lock()
			be.got, be.fail = nil, 100
			be.mu.Unlock()
			srv := newServer(t, m(countingProxy(tt.target, &dials, tt.failFirst)))
			resp, body := do(t, http.MethodPost, srv.URL+tt.path, strings.NewReader("body"), nil)
			if resp.StatusCode != tt.wantCode || dials.Load() != tt.wantDials || len(be.log()) != tt.wantHits {
				t.Errorf("status %d dials %d backend got %v, want %d %d %d requests", resp.StatusCode, dials.Load(), be.log(), tt.wantCode, tt.wantDials, tt.wantHits)
			}
			if tt.wantCode == 200 && body != "body" {
				t.Errorf("body %q", body)
			}
		})
	}
}

// Status retries (case 040): idempotent methods only unless told
// otherwise; the client sees only the final answer and its headers; every
// try carries the same body bytes; a body above maxRequestBodyBytes
// disables status retries and is streamed once.
func TestRetryStatus(t *testing.T) {
	be := &recorder{}
	live := newServer(t, be)
	r2 := &config.Retry{Attempts: 4, Status: []string{"502-504"}, Timeout: config.Duration(time.Minute)}
	limit := int64(1 << 20)
	r3 := &config.Retry{Attempts: 4, Status: []string{"503"}, RetryNonIdempotentMethod: true, MaxRequestBodyBytes: &limit}
	payload := strings.Repeat("0123456789abcdef", 128) // 2 KiB
	big := strings.Repeat("x", 5<<20)
	tests := []struct {
		name     string
		cfg      *config.Retry
		method   string
		body     string
		fail     int
		wantCode int
		wantHits int
	}{
		{"GET 503,503,200", r2, http.MethodGet, "", 2, 200, 3},
		{"POST not retried by default", r2, http.MethodPost, payload, 2, 503, 1},
		{"POST retried with retryNonIdempotentMethod", r3, http.MethodPost, payload, 2, 200, 3},
		{"PATCH retried with retryNonIdempotentMethod", r3, http.MethodPatch, payload, 2, 200, 3},
		{"PUT 5 MB above maxRequestBodyBytes: streamed once", r3, http.MethodPut, big, 1, 503, 1},
		{"last try passed through", r2, http.MethodGet, "", 10, 503, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := newRetry(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			be.mu.Lock()
			be.got, be.fail = nil, tt.fail
			be.mu.Unlock()
			var dials atomic.Int32
			srv := newServer(t, m(countingProxy(live.URL, &dials, 0)))
			resp, body := do(t, tt.method, srv.URL+"/flaky", strings.NewReader(tt.body), nil)
			got := be.log()
			if resp.StatusCode != tt.wantCode || len(got) != tt.wantHits {
				t.Fatalf("status %d, backend got %d requests %v; want %d and %d", resp.StatusCode, len(got), got, tt.wantCode, tt.wantHits)
			}
			want := fmt.Sprintf("%s /flaky %x", tt.method, sha256.Sum256([]byte(tt.body)))
			for i, g := range got {
				if g != want {
					t.Errorf("try %d received %q, want %q (byte-identical replay)", i+1, g, want)
				}
			}
			if tt.wantCode == 200 {
				if body != tt.body || resp.Header.Get("X-Final") != "yes" || resp.Header.Get("Set-Cookie") != "" {
					t.Errorf("final answer: body %d bytes, headers %v: discarded tries leaked or final lost", len(body), resp.Header)
				}
			}
		})
	}
}

// failing answers 502 as the proxy does on a dial error (reported to the
// Attempt); it reads the body when read is set.
type failing struct {
	tries atomic.Int32
	read  bool
}

func (f *failing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.tries.Add(1)
	a := AttemptOf(w)
	a.Reached()
	if f.read {
		_, _ = io.ReadAll(r.Body)
	}
	r.Header.Del("X-Keep") // an inner middleware editing headers
	w.Header().Set("X-Try", "discarded")
	a.NothingSent()
	w.WriteHeader(http.StatusBadGateway)
}

func TestRetryBackoffTimeoutAndReplaySafety(t *testing.T) {
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
		// Nominal waits 100ms × 2^(k/3): 100, 126, 159 ms, each ±50 %.
		el := time.Since(start)
		if f.tries.Load() != 4 || el < 192*time.Millisecond || el > 578*time.Millisecond || rec.Code != 502 {
			t.Errorf("tries %d after %v code %d, want 4 after 192-578ms, 502", f.tries.Load(), el, rec.Code)
		}
		if rec.Header().Get("X-Try") != "discarded" {
			t.Errorf("the last try's headers were lost: %v", rec.Header())
		}
		if req.Header.Get("X-Keep") != "1" {
			t.Errorf("the original request's headers were edited")
		}
		// Answers written before the proxy stage (a 401 from an auth
		// middleware) are never retried as network errors.
		deny := &codes{}
		deny.code.Store(http.StatusUnauthorized)
		m(deny).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		if deny.hits.Load() != 1 {
			t.Errorf("a 401 was retried: %d tries", deny.hits.Load())
		}
		// A body that was read cannot be replayed: no network retry.
		f2 := &failing{read: true}
		m(f2).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", strings.NewReader("data")))
		if f2.tries.Load() != 1 {
			t.Errorf("retried after reading the body: %d tries", f2.tries.Load())
		}
		// timeout: once elapsed, the next answer goes through.
		mt, err := newRetry(&config.Retry{Attempts: 10, Status: []string{"503"}, InitialInterval: config.Duration(time.Second), Timeout: config.Duration(2 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		slow := &codes{delay: 900 * time.Millisecond}
		slow.code.Store(http.StatusServiceUnavailable)
		rec = httptest.NewRecorder()
		mt(slow).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if n := slow.hits.Load(); n < 2 || n > 3 || rec.Code != 503 {
			t.Errorf("timeout 2s with 0.9s tries and 1s±50%% waits: %d tries, code %d; want 2-3 and 503", n, rec.Code)
		}
	})
	for _, bad := range []string{
		"{retry: {attempts: 0}}",
		"{retry: {attempts: 2, initialInterval: -1s}}",
		"{retry: {attempts: 2, timeout: -1s}}",
		"{retry: {attempts: 2, disableRetryOnNetworkError: true}}",
		"{retry: {attempts: 2, status: [\"5xx\"]}}",
	} {
		if err := buildErr(t, "http:\n  middlewares:\n    m: "+bad+"\n", "m"); err == nil || !strings.Contains(err.Error(), "middleware m: retry.") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
