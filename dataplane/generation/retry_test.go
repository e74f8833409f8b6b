package generation_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// backendLog is a backend that logs every request it received (method,
// path, body hash) and answers by behaviour.
type backendLog struct {
	mu   sync.Mutex
	got  []string
	serv func(n int, w http.ResponseWriter, r *http.Request)
}

func (b *backendLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.got = append(b.got, fmt.Sprintf("%s %s %x", r.Method, r.URL.Path, sha256.Sum256(body))[:40])
	n := len(b.got)
	b.mu.Unlock()
	b.serv(n, w, r)
}

func (b *backendLog) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.got)
}

func (b *backendLog) reset() {
	b.mu.Lock()
	b.got = nil
	b.mu.Unlock()
}

// Case 040 through the real load balancer and proxy: .61 refuses
// connections, .62 resets after reading the request, .63 answers 503 to
// GET /flaky twice, then 200. Each retry re-enters the balancer.
func TestRetryCase040(t *testing.T) {
	dead := dptest.DeadAddr(t)
	reset := &backendLog{serv: func(_ int, w http.ResponseWriter, _ *http.Request) {
		c, _, _ := http.NewResponseController(w).Hijack()
		_ = c.Close()
	}}
	flaky := &backendLog{serv: func(n int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/flaky" && n <= 2 {
			w.Header().Set("Set-Cookie", "try=bad")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	}}
	s62, s63 := httptest.NewServer(reset), httptest.NewServer(flaky)
	defer s62.Close()
	defer s63.Close()
	h := newHarness(t, nil, nil)
	apply := func(servers string) {
		reset.reset()
		flaky.reset()
		h.Apply(fmt.Sprintf(`
http:
  routers:
    r@file:  {rule: "Host(`+"`r`"+`)", service: api@file, middlewares: [r@file]}
    r2@file: {rule: "Host(`+"`r2`"+`)", service: api@file, middlewares: [r2@file]}
    r3@file: {rule: "Host(`+"`r3`"+`)", service: api@file, middlewares: [r3@file]}
  middlewares:
    r@file:  {retry: {attempts: 3}}
    r2@file: {retry: {attempts: 4, status: ["502-504"], timeout: 2s}}
    r3@file: {retry: {attempts: 4, status: ["503"], retryNonIdempotentMethod: true, maxRequestBodyBytes: 1048576}}
  services:
    api@file: {loadBalancer: {servers: [%s]}}
`, servers), generation.Options{})
	}
	send := func(host, method, path, body string) int {
		req, _ := http.NewRequest(method, "http://"+h.Addr("web")+path, strings.NewReader(body))
		req.Host = host
		resp, err := dptest.Client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s %s: a discarded try's Set-Cookie reached the client", method, path)
		}
		return resp.StatusCode
	}
	all := fmt.Sprintf("{url: 'http://%s'}, {url: %q}, {url: %q}", dead, s62.URL, s63.URL)

	// 2: POST first on .61 (refused: retried, nothing was sent), then .62
	// (reset after the request was written: never replayed) → 502; .62
	// got it once, .63 never.
	apply(all)
	if code := send("r", http.MethodPost, "/orders", strings.Repeat("{}", 1024)); code != http.StatusBadGateway {
		t.Errorf("POST /orders: %d, want 502", code)
	}
	if reset.count() != 1 || flaky.count() != 0 {
		t.Errorf("POST /orders reached .62 %d times and .63 %d times, want 1 and 0", reset.count(), flaky.count())
	}

	// 3 with r2 on .63 alone: 503, 503, 200; the client sees only the 200.
	apply(fmt.Sprintf("{url: %q}", s63.URL))
	if code := send("r2", http.MethodGet, "/flaky", ""); code != 200 || flaky.count() != 3 {
		t.Errorf("GET /flaky with r2: %d after %d tries, want 200 after 3", code, flaky.count())
	}
	// 4: POST /flaky with r2 → first 503 as is; with r3 → retried.
	apply(fmt.Sprintf("{url: %q}", s63.URL))
	if code := send("r2", http.MethodPost, "/flaky", "x"); code != 503 || flaky.count() != 1 {
		t.Errorf("POST /flaky with r2: %d after %d tries, want 503 after 1", code, flaky.count())
	}
	apply(fmt.Sprintf("{url: %q}", s63.URL))
	if code := send("r3", http.MethodPost, "/flaky", "x"); code != 200 || flaky.count() != 3 {
		t.Errorf("POST /flaky with r3: %d after %d tries, want 200 after 3", code, flaky.count())
	}
	flaky.mu.Lock()
	if len(flaky.got) == 3 && (flaky.got[0] != flaky.got[1] || flaky.got[1] != flaky.got[2]) {
		t.Errorf("replayed bodies differ: %v", flaky.got)
	}
	flaky.mu.Unlock()
	// 5: PUT of 5 MB above r3's 1 MiB: one try, the 503 goes to the client.
	apply(fmt.Sprintf("{url: %q}", s63.URL))
	if code := send("r3", http.MethodPut, "/flaky", strings.Repeat("u", 5<<20)); code != 503 || flaky.count() != 1 {
		t.Errorf("PUT 5 MB with r3: %d after %d tries, want 503 after 1", code, flaky.count())
	}
}
