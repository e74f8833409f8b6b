package generation

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

// recorder is an observe.Observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []observe.RequestEvent
	conns  map[string]int
}

func (r *recorder) Request(ev *observe.RequestEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := *ev
	e.Header, e.ResponseHeader = nil, nil
	e.Attempts, e.Calls = slices.Clone(e.Attempts), slices.Clone(e.Calls)
	r.events = append(r.events, e)
}

func (r *recorder) Conn(ep, proto string, d int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = map[string]int{}
	}
	r.conns[ep+"/"+proto] += d
}

func (r *recorder) find(pred func(observe.RequestEvent) bool) (observe.RequestEvent, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if pred(e) {
			return e, true
		}
	}
	return observe.RequestEvent{}, false
}

func echoHandlerServer(t testing.TB, hf http.Handler) *httptest.Server {
	t.Helper()
	s := newTestServer(hf)
	t.Cleanup(s.Close)
	return s
}

// echoBackend answers with the request line, Host and headers, one a line,
// like traefik/whoami.
func echoBackend(t testing.TB, name string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "Name: %s\n%s %s %s\nHost: %s\n", name, r.Method, r.RequestURI, r.Proto, r.Host)
		for k, vs := range r.Header {
			for _, v := range vs {
				fmt.Fprintf(w, "%s: %s\n", k, v)
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// echoHeader returns the value of header k in an echoBackend body ("" if absent).
func echoHeader(body, k string) string {
	for _, l := range strings.Split(body, "\n") {
		if name, v, ok := strings.Cut(l, ": "); ok && name == k {
			return v
		}
	}
	return ""
}

func firstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	return strings.Join(ls[:min(n, len(ls))], " | ")
}

// tcpEchoBackend echoes every connection, prefixed by tag, until EOF.
func tcpEchoBackend(t *testing.T, tag string) string {
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

func lineTrip(t *testing.T, c net.Conn, msg string) string {
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
