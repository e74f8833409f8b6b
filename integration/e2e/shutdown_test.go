package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// recorder is an in-process backend that remembers which requests reached
// it and answers each after a delay, so that requests are in flight when
// gantry gets SIGTERM.
type recorder struct {
	mu       sync.Mutex
	received map[int]bool
	count    atomic.Int64
	delay    time.Duration
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.URL.Query().Get("id"))
	if err != nil {
		http.Error(w, "id", http.StatusBadRequest)
		return
	}
	rec.mu.Lock()
	rec.received[id] = true
	rec.mu.Unlock()
	rec.count.Add(1)
	time.Sleep(rec.delay) // the backend's work: keeps the request in flight
	fmt.Fprintf(w, "done %d", id)
}

type result struct {
	status int
	err    error
}

// SIGTERM during load: every request that reached the backend (so was in
// flight in gantry) completes with 200, gantry stops accepting, and exits 0
// within graceTimeOut.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	rec := &recorder{received: map[int]bool{}, delay: 300 * time.Millisecond}
	backend := httptest.NewServer(rec)
	defer backend.Close()
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    r: {rule: "Host(`+"`load.test`"+`)", service: s}
  services:
    s:
      loadBalancer:
        servers: [{url: "%s"}]
`, backend.URL))
	url := p.URL(t, "web", "/")

	var (
		mu      sync.Mutex
		results = map[int]result{}
		next    atomic.Int64
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	for range 8 {
		wg.Go(func() {
			for !stop.Load() {
				id := int(next.Add(1))
				req, _ := http.NewRequest(http.MethodGet, url+"?id="+strconv.Itoa(id), nil)
				req.Host = "load.test"
				resp, err := client.Do(req)
				res := result{err: err}
				if err == nil {
					_, res.err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					res.status = resp.StatusCode
				}
				mu.Lock()
				results[id] = res
				mu.Unlock()
				if err != nil {
					return // gantry no longer accepts: this worker is done
				}
			}
		})
	}
	harness.Try(t, wait, func() error {
		if n := rec.count.Load(); n < 40 {
			return fmt.Errorf("backend got %d requests, want 40 before the signal", n)
		}
		return nil
	})
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := p.Wait(t, 60*time.Second) // graceTimeOut 10s + margin
	stop.Store(true)
	wg.Wait()
	if code != 0 {
		t.Errorf("exit code after SIGTERM: %d, want 0", code)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	failed := 0
	for id := range rec.received {
		res, ok := results[id]
		if !ok || res.err != nil || res.status != 200 {
			failed++
			t.Errorf("request %d reached the backend but got %d / %v", id, res.status, res.err)
		}
	}
	for id, res := range results {
		if res.err == nil && res.status != 200 {
			failed++
			t.Errorf("request %d was answered %d during shutdown, want 200 (or no connection)", id, res.status)
		}
	}
	if failed == 0 && len(rec.received) < 40 {
		t.Errorf("only %d requests reached the backend", len(rec.received))
	}
	t.Logf("%d requests in flight or done before the exit, all answered 200; %d requests made in all", len(rec.received), len(results))
	if !strings.Contains(p.Output(), "shutting down") {
		t.Errorf("no shutdown log line")
	}
}
