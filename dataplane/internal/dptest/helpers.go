package dptest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/observe"
)

// Eventually polls cond every 10 ms until it holds; after 10 s it fails
// the test, naming what it waited for.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// DeadAddr returns a loopback address ("127.0.0.1:port") nothing listens on.
func DeadAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	_ = l.Close()
	return a
}

// HTTPBackend starts an httptest.Server serving h, closed by t's cleanup.
func HTTPBackend(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// EchoBackend answers with its name, the request line, Host and the
// headers, one a line ("Name: a", "GET /x HTTP/1.1", "Host: h",
// "K: v"), like traefik/whoami.
func EchoBackend(t testing.TB, name string) *httptest.Server {
	t.Helper()
	return HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "Name: %s\n%s %s %s\nHost: %s\n", name, r.Method, r.RequestURI, r.Proto, r.Host)
		for k, vs := range r.Header {
			for _, v := range vs {
				fmt.Fprintf(w, "%s: %s\n", k, v)
			}
		}
	}))
}

// EchoHeader returns the value of header k in an EchoBackend body ("" if
// absent).
func EchoHeader(body, k string) string {
	v, _ := echoLookup(body, k)
	return v
}

// EchoHas reports whether an EchoBackend body holds header k.
func EchoHas(body, k string) bool {
	_, ok := echoLookup(body, k)
	return ok
}

func echoLookup(body, k string) (string, bool) {
	for _, l := range strings.Split(body, "\n") {
		if name, v, ok := strings.Cut(l, ": "); ok && name == k {
			return v, true
		}
	}
	return "", false
}

// FirstLines returns the first n lines of s joined by " | " (for
// messages).
func FirstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	return strings.Join(ls[:min(n, len(ls))], " | ")
}

// TCPEchoBackend listens on 127.0.0.1 and sends every line back prefixed
// by tag, until the client closes; it returns the address. t's cleanup
// closes the listener.
func TCPEchoBackend(t testing.TB, tag string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := io.WriteString(c, tag+line); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// LineTrip writes msg and a newline to c and returns the line read back
// (trimmed), within 3 s; an error fails the test.
func LineTrip(t testing.TB, c net.Conn, msg string) string {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return strings.TrimSpace(line)
}

// Recorder is an observe.Observer that keeps every request event (without
// its headers) and the open connections per "entrypoint/proto". Safe for
// concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []observe.RequestEvent
	conns  map[string]int
}

// Request implements observe.Observer.
func (r *Recorder) Request(ev *observe.RequestEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := *ev
	e.Header, e.ResponseHeader = nil, nil
	e.Attempts, e.Calls = slices.Clone(e.Attempts), slices.Clone(e.Calls)
	r.events = append(r.events, e)
}

// Conn implements observe.Observer.
func (r *Recorder) Conn(ep, proto string, d int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = map[string]int{}
	}
	r.conns[ep+"/"+proto] += d
}

// Conns returns the connections open on key ("web/http", "raw/tcp").
func (r *Recorder) Conns(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns[key]
}

// Events returns a copy of the events recorded so far, oldest first.
func (r *Recorder) Events() []observe.RequestEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Find returns the first event pred accepts.
func (r *Recorder) Find(pred func(observe.RequestEvent) bool) (observe.RequestEvent, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if pred(e) {
			return e, true
		}
	}
	return observe.RequestEvent{}, false
}
