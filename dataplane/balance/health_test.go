package balance

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// handlerTransport runs requests through an in-process handler, so health
// checks can be tested under synctest (whose clock cannot advance while a
// goroutine waits on a real socket).
type handlerTransport map[string]http.Handler // by host

func (ht handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h, ok := ht[r.URL.Host]
	if !ok {
		return nil, fmt.Errorf("dial %s: connection refused", r.URL.Host)
	}
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); h.ServeHTTP(rec, r) }()
	select {
	case <-done:
		return rec.Result(), nil
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// release releases c and fails the test when ReleaseChecker has not
// returned within 10 s: the last release waits for the checker to stop,
// and a checker never cancelled would keep ticking (under synctest the
// 10 s are virtual, so that fails at once instead of hanging the run).
// Pool.Close, deferred by every test, then stops the checker.
func release(t *testing.T, p *Pool, c *Checker) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.ReleaseChecker(c)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("ReleaseChecker(%s): still waiting for the checker to stop after 10 s", c.origin)
	}
}

// Case 032: 200, 204 and a 301 followed to a 200 are healthy; 404 and a
// health endpoint slower than the timeout are down after their first
// check, which runs one interval after start; one success brings a server
// back; unhealthyInterval paces checks of a down server; status: 204 makes
// only 204 healthy.
func TestActiveHealthCheckStatuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fail404 atomic.Bool
		fail404.Store(true)
		hosts := handlerTransport{
			"s200:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
			"s204:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }),
			"s301:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/health" {
					http.Redirect(w, r, "/health/", http.StatusMovedPermanently)
				}
			}),
			"s404:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if fail404.Load() {
					w.WriteHeader(404)
				}
			}),
			"slow:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(15 * time.Second):
				case <-r.Context().Done():
				}
			}),
		}
		p := NewPool(slog.New(slog.DiscardHandler))
		defer p.Close()
		unhealthy := config.Duration(time.Second)
		hc := &config.ServerHealthCheck{Path: "/health", Interval: config.Duration(5 * time.Second), Timeout: config.Duration(2 * time.Second), UnhealthyInterval: &unhealthy}
		checkers := map[string]*Checker{}
		for _, host := range []string{"s200", "s204", "s301", "s404", "slow"} {
			u, _ := url.Parse("http://" + host + ":80")
			spec, err := NewHealthSpec(u, hc)
			if err != nil {
				t.Fatal(err)
			}
			checkers[host] = p.AcquireChecker(u, spec, "test", hosts)
		}
		changed := p.Changed()
		up := func() map[string]bool {
			m := map[string]bool{}
			for h, c := range checkers {
				m[h] = c.up.Load()
			}
			return m
		}
		want := map[string]bool{"s200": true, "s204": true, "s301": true, "s404": true, "slow": true}
		time.Sleep(4 * time.Second)
		synctest.Wait()
		if got := up(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("before the first interval: got %v, want all up", got)
		}
		time.Sleep(3 * time.Second) // t=7s: first checks done (slow one timed out at 7s)
		synctest.Wait()
		want["s404"], want["slow"] = false, false
		if got := up(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after the first check: got %v, want %v", got, want)
		}
		select {
		case <-changed:
		default:
			t.Error("Changed did not fire when servers went down")
		}
		if c := checkers["slow"]; c.lastErr.Load() == nil {
			t.Error("slow server has no last error")
		}
		fail404.Store(false)
		time.Sleep(1 * time.Second) // unhealthyInterval 1s: the next check of s404 at t=6s+1s+…
		synctest.Wait()
		time.Sleep(1 * time.Second)
		synctest.Wait()
		if !checkers["s404"].up.Load() {
			t.Error("s404 answering 200 again is still down")
		}
		for _, c := range checkers {
			release(t, p, c)
		}
	})
}

func TestHealthCheckExactStatusAndRedirectOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hosts := handlerTransport{
			"a:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),                                                           // 200
			"b:80": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "http://gone:80/", http.StatusFound) }), // 302, target refuses
		}
		p := NewPool(slog.New(slog.DiscardHandler))
		defer p.Close()
		off := false
		tests := []struct {
			host string
			hc   config.ServerHealthCheck
			up   bool
		}{
			{"a", config.ServerHealthCheck{Status: 204}, false},
			{"a", config.ServerHealthCheck{Status: 200, Method: "HEAD"}, true},
			{"b", config.ServerHealthCheck{}, false},                     // redirect followed to a refused server
			{"b", config.ServerHealthCheck{FollowRedirects: &off}, true}, // the 302 itself counts
		}
		var cs []*Checker
		for _, tt := range tests {
			tt.hc.Interval = config.Duration(time.Second)
			u, _ := url.Parse("http://" + tt.host + ":80")
			spec, _ := NewHealthSpec(u, &tt.hc)
			cs = append(cs, p.AcquireChecker(u, spec, "t", hosts))
		}
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		for i, tt := range tests {
			if got := cs[i].up.Load(); got != tt.up {
				t.Errorf("%s %+v: up=%v, want %v (last error %v)", tt.host, tt.hc, got, tt.up, cs[i].lastErr.Load())
			}
			release(t, p, cs[i])
		}
	})
}

// A checker is shared by every acquire of the same (origin, spec,
// transport) and stops with the last release; another transport key gets
// its own.
func TestCheckerSharedAndReleased(t *testing.T) {
	p := NewPool(slog.New(slog.DiscardHandler))
	defer p.Close()
	u, _ := url.Parse("http://a:80")
	spec, err := NewHealthSpec(u, &config.ServerHealthCheck{Interval: config.Duration(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	ht := handlerTransport{}
	c1, c2 := p.AcquireChecker(u, spec, "t", ht), p.AcquireChecker(u, spec, "t", ht)
	other := p.AcquireChecker(u, spec, "t2", ht)
	if c1 != c2 || c1 == other {
		t.Fatalf("same key shared %v, other key separate %v", c1 == c2, c1 != other)
	}
	release(t, p, c1)
	select {
	case <-c1.done:
		t.Fatal("checker stopped while a reference is left")
	default:
	}
	release(t, p, c2)
	release(t, p, other)
	for name, c := range map[string]*Checker{"shared": c1, "other": other} {
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s checker still running 10 s after its last release", name)
		}
	}
	p.mu.Lock()
	n := len(p.checkers)
	p.mu.Unlock()
	if n != 0 {
		t.Errorf("%d checkers left after the last release", n)
	}
}
