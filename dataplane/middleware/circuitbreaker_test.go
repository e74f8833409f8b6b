package middleware

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

func TestCircuitBreakerThroughProxy(t *testing.T) {
	var hits atomic.Int32
	backend := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	res := resolverFrom(t, "http:\n  middlewares:\n    cb: {circuitBreaker: {expression: \"NetworkErrorRatio() > 0.5\", responseCode: 529}}\n")
	srv := front(t, res, backend.URL, "cb")
	resp, _ := do(t, http.MethodGet, srv.URL+"/", nil, nil)
	if resp.StatusCode != 502 {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	resp, _ = do(t, http.MethodGet, srv.URL+"/", nil, nil)
	if resp.StatusCode != 529 || hits.Load() != 1 {
		t.Errorf("tripped: %d after %d backend hits, want 529 after 1", resp.StatusCode, hits.Load())
	}
}

// codes answers the status in its atomic.
type codes struct {
	code  atomic.Int32
	delay time.Duration
	hits  atomic.Int32
}

func (c *codes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.hits.Add(1)
	if c.delay > 0 {
		time.Sleep(c.delay)
	}
	w.WriteHeader(int(c.code.Load()))
}

func TestCircuitBreakerStates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := newCircuitBreaker(&config.CircuitBreaker{
			Expression:       "ResponseCodeRatio(500, 600, 0, 600) > 0.25",
			CheckPeriod:      config.Duration(time.Second),
			FallbackDuration: config.Duration(10 * time.Second),
			RecoveryDuration: config.Duration(10 * time.Second),
		})
		if err != nil {
			t.Fatal(err)
		}
		be := &codes{}
		be.code.Store(200)
		h := m(be)
		get := func() int {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			return rec.Code
		}
		for range 5 {
			get()
		}
		time.Sleep(time.Second)
		be.code.Store(500)
		get() // 1 of 6 failed, under 25%: stays closed
		for range 2 {
			get() // within the check period: not evaluated
		}
		if c := get(); c != 500 {
			t.Fatalf("before next check: %d", c)
		}
		time.Sleep(time.Second)
		get() // 5 of 10 failed: trips
		hits := be.hits.Load()
		if c := get(); c != 503 || be.hits.Load() != hits {
			t.Fatalf("tripped: %d (backend hit: %v)", c, be.hits.Load() != hits)
		}
		time.Sleep(9 * time.Second)
		if c := get(); c != 503 {
			t.Fatalf("still in fallback: %d", c)
		}
		be.code.Store(200)
		time.Sleep(6 * time.Second) // recovering, about half the requests pass
		passed := 0
		for range 200 {
			if get() == 200 {
				passed++
			}
		}
		if passed < 40 || passed > 160 {
			t.Errorf("recovering at ~50%%: %d of 200 passed", passed)
		}
		time.Sleep(5 * time.Second)
		for range 20 {
			if c := get(); c != 200 {
				t.Fatalf("closed again: %d", c)
			}
		}
	})
}

func TestCircuitBreakerLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := newCircuitBreaker(&config.CircuitBreaker{Expression: "LatencyAtQuantileMS(50.0) > 100", ResponseCode: 504})
		if err != nil {
			t.Fatal(err)
		}
		be := &codes{delay: 50 * time.Millisecond}
		be.code.Store(200)
		h := m(be)
		get := func() int {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			return rec.Code
		}
		for range 10 {
			if c := get(); c != 200 {
				t.Fatalf("fast backend: %d", c)
			}
		}
		be.delay = 300 * time.Millisecond
		for range 15 {
			get()
		}
		if c := get(); c != 504 {
			t.Errorf("slow backend: %d, want 504", c)
		}
	})
}

func TestCircuitBreakerExpressions(t *testing.T) {
	w := &window{}
	now := time.Unix(1000, 0)
	for range 3 {
		w.add(now, 200, 10*time.Millisecond)
	}
	w.add(now, 502, 200*time.Millisecond)
	env := &cbEnv{w: w, now: now}
	if got := env.NetworkErrorRatio(); got != 0.25 {
		t.Errorf("NetworkErrorRatio %v", got)
	}
	if got := env.ResponseCodeRatio(500, 600, 200, 300); got != 1.0/3 {
		t.Errorf("ResponseCodeRatio %v", got)
	}
	if got := env.LatencyAtQuantileMS(50); got < 10 || got > 11 {
		t.Errorf("p50 %v ms, want about 10", got)
	}
	if got := env.LatencyAtQuantileMS(99); got < 200 || got > 221 {
		t.Errorf("p99 %v ms, want about 200", got)
	}
	if got := (&cbEnv{w: w, now: now.Add(11 * time.Second)}).NetworkErrorRatio(); got != 0 {
		t.Errorf("outside the window: %v", got)
	}
	for _, bad := range []string{`{circuitBreaker: {expression: "Bogus() > 1"}}`, `{circuitBreaker: {}}`, `{circuitBreaker: {expression: "NetworkErrorRatio()"}}`} {
		if err := buildErr(t, "http:\n  middlewares:\n    m: "+bad+"\n", "m"); err == nil || !strings.Contains(err.Error(), "circuitBreaker.expression") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if err := buildErr(t, "http:\n  middlewares:\n    m: {circuitBreaker: {expression: \"NetworkErrorRatio() > 0.5 || LatencyAtQuantileMS(50) > 100\"}}\n", "m"); err != nil {
		t.Errorf("integer quantile: %v", err)
	}
}

// Case 044: the same circuitBreaker middleware on two routers is two
// breakers; tripping one leaves the other serving.
func TestCircuitBreakerPerRouter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := newCircuitBreaker(&config.CircuitBreaker{Expression: "ResponseCodeRatio(500, 600, 0, 600) > 0.30", CheckPeriod: config.Duration(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		shopBE, adminBE := &codes{}, &codes{}
		shopBE.code.Store(500)
		adminBE.code.Store(200)
		shop, admin := m(shopBE), m(adminBE)
		get := func(h http.Handler) int {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			return rec.Code
		}
		for range 10 {
			get(shop)
			get(admin)
		}
		time.Sleep(time.Second)
		get(shop) // evaluated: 100% errors, trips
		if c := get(shop); c != 503 {
			t.Fatalf("shop: %d, want the fallback 503", c)
		}
		for range 5 {
			if c := get(admin); c != 200 {
				t.Fatalf("admin shares shop's breaker: %d", c)
			}
		}
	})
}
