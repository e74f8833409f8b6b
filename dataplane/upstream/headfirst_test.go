package upstream

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
)

// flushSignal is a recorder that reports its first flush.
type flushSignal struct {
	*recorder
	flushed chan struct{}
}

func (w *flushSignal) Flush() {
	w.recorder.Flush()
	select {
	case w.flushed <- struct{}{}:
	default:
	}
}

// Issue 26: a response head whose body comes later is flushed to the
// client before the backend sends any body byte — for a chunked head and
// for a Content-Length head whose backend stalls. The backend sends the
// body only after the test saw the flush (event order, no timing).
func TestResponseHeadFlushedBeforeLateBody(t *testing.T) {
	for name, head := range map[string]string{
		"chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
		"length":  "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			gate := make(chan struct{})
			addr := rawBackend(t, func(c net.Conn) {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				io.WriteString(c, head)
				<-gate
				if name == "chunked" {
					io.WriteString(c, "5\r\nhello\r\n0\r\n\r\n")
				} else {
					io.WriteString(c, "hello")
				}
			})
			c := testClient(Options{})
			defer c.Close()
			w := &flushSignal{recorder: newRecorder(), flushed: make(chan struct{}, 1)}
			done := make(chan Result, 1)
			go func() {
				done <- c.Host("http", addr).Forward(w, &Outbound{Req: httptest.NewRequest("GET", "http://x.test/", nil), ClientIP: "192.0.2.1", Host: "x.test"})
			}()
			select {
			case <-w.flushed:
			case <-time.After(20 * time.Second):
				close(gate)
				t.Fatal("the head was not flushed while the backend held its body back")
			}
			w.mu.Lock()
			status, body := w.status, w.body.String()
			w.mu.Unlock()
			if status != 200 || body != "" {
				t.Fatalf("at the first flush: status %d body %q, want 200 and no body yet", status, body)
			}
			close(gate)
			if res := <-done; res.Err != nil || w.body.String() != "hello" {
				t.Fatalf("got %q %v", w.body.String(), res.Err)
			}
		})
	}
}

// Issue 26: BodyReadTimeout bounds each wait for body bytes once the head
// was relayed. A stream that sends a chunk every 100 ms for longer than
// the timeout (300 ms) in total completes; one that stalls after its
// first chunk ends in a timeout with the head sent (the caller aborts the
// client's response), its first chunk delivered.
func TestBodyReadTimeoutBetweenBodyBytes(t *testing.T) {
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		r, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n")
		if r.URL.Path == "/stall" {
			time.Sleep(5 * time.Second)
			return
		}
		for range 8 {
			time.Sleep(100 * time.Millisecond)
			io.WriteString(c, "1\r\nb\r\n")
		}
		io.WriteString(c, "0\r\n\r\n")
	})
	c := testClient(Options{BodyReadTimeout: 300 * time.Millisecond})
	defer c.Close()
	w, res := forward(t, c, addr, httptest.NewRequest("GET", "http://x.test/steady", nil))
	if res.Err != nil || w.body.String() != "abbbbbbbb" {
		t.Fatalf("steady stream: got %q %v, want it whole", w.body.String(), res.Err)
	}
	w, res = forward(t, c, addr, httptest.NewRequest("GET", "http://x.test/stall", nil))
	if !res.Sent || !isTimeout(res.Err) || w.body.String() != "a" {
		t.Fatalf("stalled stream: got %q sent=%v err=%v, want a timeout after the first chunk", w.body.String(), res.Sent, res.Err)
	}
}

// Issue 26: from an h2c backend too, a head whose body comes later is
// flushed to the client before the backend sends any body byte.
func TestResponseHeadFlushedBeforeLateBodyH2C(t *testing.T) {
	gate := make(chan struct{})
	s := httptest.NewServer(h2c.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		http.NewResponseController(w).Flush()
		<-gate
		io.WriteString(w, "hello")
	}), &http2.Server{}))
	defer s.Close()
	defer close(gate)
	c := testClient(Options{})
	defer c.Close()
	w := &flushSignal{recorder: newRecorder(), flushed: make(chan struct{}, 1)}
	done := make(chan Result, 1)
	go func() {
		done <- c.Host("h2c", hostOf(s)).Forward(w, &Outbound{Req: httptest.NewRequest("GET", "http://x.test/", nil), ClientIP: "192.0.2.1", Host: "x.test"})
	}()
	select {
	case <-w.flushed:
	case <-time.After(20 * time.Second):
		t.Fatal("the head was not flushed while the h2c backend held its body back")
	}
	w.mu.Lock()
	status, body := w.status, w.body.String()
	w.mu.Unlock()
	if status != 200 || body != "" {
		t.Fatalf("at the first flush: status %d body %q, want 200 and no body yet", status, body)
	}
}
