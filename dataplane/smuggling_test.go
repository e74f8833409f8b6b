package dataplane

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/generation"
)

// smugglingVector is one raw request of testdata/smuggling/vectors.json
// (reliability.md §3.1, in our words) and what must happen to it.
type smugglingVector struct {
	ID, What string
	Send     string
	Statuses []int    // the statuses the client reads, in order
	AnyOf    []int    // if set, the one status may be any of these (a body fault: the handler decides)
	Close    bool     // the connection is closed after them
	Backend  int      // complete requests the backend receives
	Has      []string // substrings of what the backend received
	Lacks    []string // substrings it must not have received
}

// captureBackend records every request it receives, as one canonical
// text: request line, host, sorted fields, body (or the body's read error).
type captureBackend struct {
	*httptest.Server
	mu       sync.Mutex
	complete []string
	broken   int
}

func newCaptureBackend(t *testing.T) *captureBackend {
	cb := &captureBackend{}
	cb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		cb.mu.Lock()
		defer cb.mu.Unlock()
		if err != nil {
			cb.broken++
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s %s\nhost=%s\n", r.Method, r.RequestURI, r.Proto, r.Host)
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.Header[k], ", "))
		}
		fmt.Fprintf(&b, "body=%s", body)
		cb.complete = append(cb.complete, b.String())
		io.WriteString(w, "ok")
	}))
	t.Cleanup(cb.Close)
	return cb
}

func (cb *captureBackend) take() []string {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	got := cb.complete
	cb.complete = nil
	return got
}

func loadVectors(t *testing.T) []smugglingVector {
	b, err := os.ReadFile("testdata/smuggling/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []smugglingVector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) != 36 {
		t.Fatalf("want the 36 vectors of reliability.md §3.1, got %d", len(vs))
	}
	return vs
}

// rawExchange writes raw on a new connection to addr and reads up to max
// responses; it reports their statuses and whether the connection was
// closed after them (EOF within a short wait) rather than kept open.
func rawExchange(t *testing.T, addr, raw string, max int) (statuses []int, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for range max {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return statuses, true
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err = br.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return statuses, false
	}
	return statuses, true // EOF, a reset, or another response (a smuggled one)
}

// TestSmugglingVectors sends the 36 vectors through a real Server and
// proxy to a capture backend and asserts, for each, the statuses, whether
// the connection is closed, and what the backend received (nothing for a
// refused request; re-serialised, unambiguous requests otherwise).
func TestSmugglingVectors(t *testing.T) {
	be := newCaptureBackend(t)
	h := newHarness(t, nil, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	for _, v := range loadVectors(t) {
		t.Run(v.ID, func(t *testing.T) {
			raw := strings.ReplaceAll(v.Send, "@20480", strings.Repeat("a", 20480))
			be.take()
			statuses, closed := rawExchange(t, h.Addr("web"), raw, len(v.Statuses))
			time.Sleep(50 * time.Millisecond) // a forwarded body fault reaches the backend, if at all
			got := be.take()
			ok := slices.Equal(statuses, v.Statuses)
			if v.AnyOf != nil {
				ok = len(statuses) == 1 && slices.Contains(v.AnyOf, statuses[0])
			}
			if !ok {
				t.Fatalf("%s: statuses %v, want %v (any of %v)", v.What, statuses, v.Statuses, v.AnyOf)
			}
			if closed != v.Close {
				t.Fatalf("%s: connection closed=%v, want %v", v.What, closed, v.Close)
			}
			if len(got) != v.Backend {
				t.Fatalf("%s: backend received %d complete requests, want %d:\n%s", v.What, len(got), v.Backend, strings.Join(got, "\n---\n"))
			}
			all := strings.Join(got, "\n---\n")
			for _, s := range v.Has {
				if !strings.Contains(all, s) {
					t.Errorf("%s: backend did not receive %q:\n%s", v.What, s, all)
				}
			}
			for _, s := range v.Lacks {
				if strings.Contains(all, s) {
					t.Errorf("%s: backend received %q:\n%s", v.What, s, all)
				}
			}
		})
	}
}
