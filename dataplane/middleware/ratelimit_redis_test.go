package middleware

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gantry-proxy/gantry/config"
)

// hungRedis accepts connections and never answers: the Redis that held
// every rate-limited request 20.1 s (go-redis retried 3 times, each
// waiting readTimeout, with backoff between). It counts the connections.
type hungRedis struct {
	ln    net.Listener
	conns atomic.Int32
	mu    sync.Mutex
	open  []net.Conn
}

func startHungRedis(t *testing.T) *hungRedis {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungRedis{ln: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.conns.Add(1)
			h.mu.Lock()
			h.open = append(h.open, c)
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		h.mu.Lock()
		for _, c := range h.open {
			c.Close()
		}
		h.mu.Unlock()
	})
	return h
}

// Issue 23: a hung Redis costs a rate-limited request one attempt, cut at
// readTimeout (no retries), answered 500; counted in connections, each
// attempt needing its own (the hung one is never given back).
func TestRedisRateLimitHungBackendOneAttempt(t *testing.T) {
	h := startHungRedis(t)
	rt := config.Duration(200 * time.Millisecond)
	mw, err := newRateLimit("hung@test", &config.RateLimit{Average: 10, Burst: 10,
		Redis: &config.RateLimitRedis{Endpoints: []string{h.ln.Addr().String()}, ReadTimeout: rt, MinIdleConns: 0}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeRedisClients)
	handler := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("request admitted while Redis hangs") }))
	for i := range 3 {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://x/", nil))
		if rec.Code != http.StatusInternalServerError {
			t.Fatalf("request %d: status %d, want 500", i, rec.Code)
		}
		if n := h.conns.Load(); n != int32(i+1) {
			t.Fatalf("after request %d: %d connections to the hung Redis, want %d (one attempt per request, no retries)", i, n, i+1)
		}
	}
	name := "redis " + h.ln.Addr().String()
	if st := Backends()[name]; st.State != "down" || !strings.Contains(st.LastError, "timeout") {
		t.Errorf("backend %s: %+v; want down with the timeout", name, st)
	}
}

// closeRedisClients closes and forgets every shared client (a test built
// without a generation to release them).
func closeRedisClients() {
	redisClients.mu.Lock()
	defer redisClients.mu.Unlock()
	for k, sc := range redisClients.m {
		if sc.timer != nil {
			sc.timer.Stop()
		}
		sc.c.Close()
		delete(redisClients.m, k)
	}
}

// blackHole returns a loopback address whose connects hang: a socket
// listening with a full accept queue (backlog 0, one connection queued,
// never accepted) drops further SYNs, as a firewall dropping packets does.
func blackHole(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for range 2 { // fill the queue
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			t.Cleanup(func() { c.Close() })
		}
	}
	if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
		c.Close()
		t.Skip("this kernel completes connects past a full accept queue: no black hole to test with")
	}
	return addr
}

// Issue 23: an unreachable Redis (connects hang) costs one dial per
// decision, bounded by readTimeout: go-redis dialled 4 times (3 retries)
// for dialTimeout (5 s) each, 20.1 s in all.
func TestRedisRateLimitBlackHoleOneDial(t *testing.T) {
	addr := blackHole(t)
	rt, dt := config.Duration(300*time.Millisecond), config.Duration(time.Hour)
	c := &config.RateLimitRedis{Endpoints: []string{addr}, ReadTimeout: rt, DialTimeout: dt}
	o, err := redisOptions(c)
	if err != nil {
		t.Fatal(err)
	}
	// go-redis dials in the background of the request (for its pool):
	// the test stops those dials when it ends.
	var dials atomic.Int32
	var dialing sync.WaitGroup
	stop, stopDials := context.WithCancel(context.Background())
	o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		dialing.Add(1)
		defer dialing.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-stop.Done():
				cancel()
			case <-ctx.Done():
			}
		}()
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	client := redis.NewUniversalClient(o)
	defer func() {
		stopDials()
		dialing.Wait()
		client.Close()
	}()
	l := &redisLimiter{client: client, prefix: "gantry:rate:bh:", perMicro: 1e-5, burst: 1, ttl: 1, timeout: decisionTimeout(c)}
	for i := range 2 {
		done := make(chan error, 1)
		go func() { _, _, err := l.take(context.Background(), "k"); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("decision %d: no error from a black-holed Redis", i)
			}
		case <-time.After(time.Minute):
			stopDials()
			<-done
			t.Fatalf("decision %d still waiting a minute into a black-holed dial (readTimeout 300ms)", i)
		}
		// The decision returned although its dial (timeout an hour) never
		// completed: readTimeout bounded it; one dial per decision.
		if n := dials.Load(); n != int32(i+1) {
			t.Fatalf("after decision %d: %d dials, want %d (no retries)", i, n, i+1)
		}
	}
}
