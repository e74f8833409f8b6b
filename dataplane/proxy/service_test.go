package proxy

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/balance"
	"github.com/gantry-proxy/gantry/dataplane/upstream"
)

// panicWriter is a client's writer that aborts the response on the first
// body write, as a handler's writer may (http.ErrAbortHandler).
type panicWriter struct{ *httptest.ResponseRecorder }

func (w panicWriter) Write([]byte) (int, error) { panic(http.ErrAbortHandler) }

// cutBackend answers every request with a body cut short of its
// Content-Length, then closes.
func cutBackend(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// refusedAddr is a loopback address nothing listens on.
func refusedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// Every forwarding attempt ends its server's in-flight count, whatever
// happens: served, the backend's body cut (the client's response aborted
// with http.ErrAbortHandler), the connection refused (502), and the
// client's writer panicking in the middle of the relay (issue 12: an
// abort panicked past the decrement, the count leaked forever and skewed
// p2c and leasttime).
func TestInFlightEndsWhateverTheOutcome(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer ok.Close()
	pool := balance.NewPool(slog.New(slog.DiscardHandler))
	defer pool.Close()
	client := upstream.New(upstream.Options{})
	defer client.Close()
	for _, tc := range []struct {
		name, url string
		writer    func(*httptest.ResponseRecorder) http.ResponseWriter
		status    int  // recorded status (0: none)
		aborted   bool // ServeHTTP panics with http.ErrAbortHandler
	}{
		{"served", ok.URL, nil, 200, false},
		{"body cut", cutBackend(t), nil, 200, true},
		{"refused", refusedAddr(t), nil, 502, false},
		{"client writer panics", ok.URL, func(r *httptest.ResponseRecorder) http.ResponseWriter { return panicWriter{r} }, 200, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := url.Parse(tc.url)
			b := pool.AcquireBackend(u, "svc")
			defer pool.ReleaseBackend(b, "svc")
			target := NewTarget(u, b, client, true, false)
			target.Weight = 1
			lb := NewLoadBalancer(LoadBalancer{
				Name: "svc", Targets: []*Target{target}, URLs: []string{tc.url},
				Servers: 1, Pool: pool, Log: slog.New(slog.DiscardHandler),
			})
			rec := httptest.NewRecorder()
			var w http.ResponseWriter = rec
			if tc.writer != nil {
				w = tc.writer(rec)
			}
			var aborted bool
			func() {
				defer func() {
					if v := recover(); v != nil {
						if err, _ := v.(error); !errors.Is(err, http.ErrAbortHandler) {
							panic(v)
						}
						aborted = true
					}
				}()
				lb.ServeHTTP(w, httptest.NewRequest("GET", "http://app.test/", nil))
			}()
			if aborted != tc.aborted || rec.Code != tc.status {
				t.Errorf("status %d aborted %v, want %d aborted %v", rec.Code, aborted, tc.status, tc.aborted)
			}
			for _, s := range pool.Status() {
				if s.URL == b.Key() && s.InFlight != 0 {
					t.Fatalf("%s: %d requests still in flight after the handler returned", s.URL, s.InFlight)
				}
			}
		})
	}
}
