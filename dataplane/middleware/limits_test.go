package middleware

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

func TestRateLimitBurstPerSource(t *testing.T) {
	res := resolverFrom(t, `
http:
  middlewares:
    rl:  {rateLimit: {average: 1, period: 1m, burst: 2}}
    rlh: {rateLimit: {average: 1, period: 1m, burst: 1, sourceCriterion: {requestHeaderName: X-Api-Key}}}
`)
	be := echoBackend(t).URL
	srv := front(t, res, be, "rl")
	var codes []int
	for range 3 {
		resp, _ := do(t, http.MethodGet, srv.URL+"/", nil, nil)
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == 429 && (resp.Header.Get("Retry-After") == "" || resp.Header.Get("X-Retry-In") == "") {
			t.Errorf("429 without Retry-After / X-Retry-In: %v", resp.Header)
		}
	}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 429 {
		t.Errorf("codes %v, want 200 200 429 (burst 2)", codes)
	}
	srvh := front(t, res, be, "rlh")
	for _, tt := range []struct {
		key  string
		code int
	}{{"a", 200}, {"b", 200}, {"a", 429}, {"b", 429}} {
		resp, _ := do(t, http.MethodGet, srvh.URL+"/", nil, withHeader("X-Api-Key", tt.key))
		if resp.StatusCode != tt.code {
			t.Errorf("key %s: %d, want %d", tt.key, resp.StatusCode, tt.code)
		}
	}
}

// Refill, short waits and bucket expiry run on synctest's clock.
func TestRateLimitRefillAndWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl, err := newRateLimitState(&config.RateLimit{Average: 10, Burst: 1})
		if err != nil {
			t.Fatal(err)
		}
		h := rl.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		serve := func() (int, time.Duration) {
			start := time.Now()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			return rec.Code, time.Since(start)
		}
		if code, _ := serve(); code != 200 {
			t.Fatalf("first: %d", code)
		}
		// 10/s: the next token comes in 100ms, more than the 50ms maximum wait.
		if code, _ := serve(); code != 429 {
			t.Fatalf("immediate second: %d, want 429", code)
		}
		time.Sleep(60 * time.Millisecond)
		code, waited := serve() // 40ms left to wait: delayed, then served
		if code != 200 || waited != 40*time.Millisecond {
			t.Fatalf("after 60ms: %d after %v, want 200 after 40ms", code, waited)
		}
		time.Sleep(time.Second)
		if code, _ := serve(); code != 200 {
			t.Fatalf("after refill: %d", code)
		}
		key := "192.0.2.1" // httptest.NewRequest's RemoteAddr
		if _, ok := rl.buckets[key]; !ok {
			t.Fatalf("no bucket for %s", key)
		}
		time.Sleep(5 * time.Second)
		rl.get([]byte("other"), time.Now()) // a new source triggers the sweep
		if _, ok := rl.buckets[key]; ok {
			t.Errorf("idle bucket not swept")
		}
	})
}

func TestInFlightReq(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	backend := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			started.Done()
			<-release
		}
	}))
	res := resolverFrom(t, "http:\n  middlewares:\n    ifr: {inFlightReq: {amount: 2}}\n")
	srv := front(t, res, backend.URL, "ifr")
	started.Add(2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { do(t, http.MethodGet, srv.URL+"/block", nil, nil) })
	}
	started.Wait()
	resp, _ := do(t, http.MethodGet, srv.URL+"/fast", nil, nil)
	if resp.StatusCode != 429 {
		t.Errorf("third concurrent request: %d, want 429", resp.StatusCode)
	}
	close(release)
	wg.Wait()
	resp, _ = do(t, http.MethodGet, srv.URL+"/fast", nil, nil)
	if resp.StatusCode != 200 {
		t.Errorf("after release: %d, want 200", resp.StatusCode)
	}
	if err := buildErr(t, "http:\n  middlewares:\n    m: {inFlightReq: {amount: 0}}\n", "m"); err == nil {
		t.Error("amount 0 accepted")
	}
	if err := buildErr(t, "http:\n  middlewares:\n    m: {rateLimit: {average: 1, sourceCriterion: {requestHost: true, requestHeaderName: X}}}\n", "m"); err == nil {
		t.Error("two source criteria accepted")
	}
}
