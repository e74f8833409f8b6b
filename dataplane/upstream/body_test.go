package upstream

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// chunkedCase is a chunked response body: its wire bytes and what it
// decodes to.
type chunkedCase struct {
	wire, data []byte
	trailer    string // X-Sum's value, "" for none
}

// randomChunked builds a chunked body of random chunk sizes (1 byte to
// 40 000, so chunks straddle the 32 KiB body buffer), some with
// extensions, some with a trailer.
func randomChunked(rng *rand.Rand) chunkedCase {
	var wire, data bytes.Buffer
	for range 1 + rng.IntN(12) {
		n := 1 + rng.IntN(40000)
		if rng.IntN(3) == 0 {
			n = 1 + rng.IntN(16)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		fmt.Fprintf(&wire, "%x", n)
		if rng.IntN(4) == 0 {
			wire.WriteString(";ext=" + strings.Repeat("e", rng.IntN(200)))
		}
		wire.WriteString("\r\n")
		wire.Write(b)
		wire.WriteString("\r\n")
		data.Write(b)
	}
	wire.WriteString("0\r\n")
	c := chunkedCase{}
	if rng.IntN(2) == 0 {
		c.trailer = fmt.Sprint(rng.IntN(1000))
		wire.WriteString("X-Sum: " + c.trailer + "\r\n")
	}
	wire.WriteString("\r\n")
	c.wire, c.data = wire.Bytes(), data.Bytes()
	return c
}

// writeSplit writes b to c in random pieces, sometimes pausing so that the
// reader finds nothing to read mid-line, mid-chunk or mid-CRLF.
func writeSplit(c net.Conn, b []byte, rng *rand.Rand) error {
	for len(b) > 0 {
		n := min(len(b), 1+rng.IntN(3*len(b)/2+1))
		if rng.IntN(3) == 0 {
			n = min(len(b), 1+rng.IntN(8))
		}
		if _, err := c.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if rng.IntN(4) == 0 {
			time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
		}
	}
	return nil
}

// Chunked bodies of every shape, written in random pieces over real TCP
// (the path where the body is read through the socket's RawConn), reach
// the client byte for byte with their trailers, and the connection is
// reused after each; every third response carries the same data with
// Content-Length (heads read into the small or, after a large body, the
// 32 KiB buffer).
func TestChunkedBodyRelayedExactly(t *testing.T) {
	const rounds = 40
	rng := rand.New(rand.NewPCG(12, 1))
	cases := make([]chunkedCase, rounds)
	for i := range cases {
		cases[i] = randomChunked(rng)
	}
	var accepted atomic.Int32
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		accepted.Add(1)
		wr := rand.New(rand.NewPCG(7, uint64(accepted.Load())))
		br := bufio.NewReader(c)
		for i := 0; ; i++ {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			cs := cases[i%rounds]
			head := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
			if cs.trailer != "" {
				head += "Trailer: X-Sum\r\n"
			}
			wire := cs.wire
			if i%3 == 2 { // the same data with Content-Length
				head, wire = fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n", len(cs.data)), cs.data
			}
			if writeSplit(c, append([]byte(head+"\r\n"), wire...), wr) != nil {
				return
			}
		}
	})
	c := testClient(Options{})
	defer c.Close()
	for i, cs := range cases {
		w, res := forward(t, c, addr, httptest.NewRequest("GET", "http://x.test/", nil))
		if res.Err != nil {
			t.Fatalf("case %d: %v", i, res.Err)
		}
		if got := w.body.String(); got != string(cs.data) {
			t.Fatalf("case %d: got %d bytes, want %d (first difference at %d)", i, len(got), len(cs.data), firstDiff(got, string(cs.data)))
		}
		if i%3 == 2 {
			cs.trailer = ""
		}
		if got := w.header.Get(http.TrailerPrefix + "X-Sum"); got != cs.trailer {
			t.Fatalf("case %d: trailer %q, want %q", i, got, cs.trailer)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("%d connections for %d exchanges, want 1", n, rounds)
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A chunked body cut anywhere before the end of its trailer section (the
// backend closes) is an error after the head was sent: the client's
// message is aborted, never completed, whatever the cut falls on.
func TestChunkedBodyCutAnywhereIsAnError(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cs := chunkedCase{}
	for cs.trailer == "" || len(cs.wire) < 40000 {
		cs = randomChunked(rng)
	}
	cuts := []int{0, 1, 2, 3, len(cs.wire) - 1, len(cs.wire) - 2, len(cs.wire) - 3}
	for range 20 {
		cuts = append(cuts, rng.IntN(len(cs.wire)))
	}
	for _, cut := range cuts {
		addr := rawBackend(t, func(c net.Conn) {
			defer c.Close()
			if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
				return
			}
			wr := rand.New(rand.NewPCG(5, uint64(cut)))
			_ = writeSplit(c, append([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), cs.wire[:cut]...), wr)
		})
		c := testClient(Options{})
		_, res := forward(t, c, addr, httptest.NewRequest("GET", "http://x.test/", nil))
		c.Close()
		if res.Err == nil || !res.Sent {
			t.Fatalf("cut at %d of %d: err %v sent %v, want an error after the head", cut, len(cs.wire), res.Err, res.Sent)
		}
	}
}

// flushRecorder reports each Flush with the body written so far.
type flushRecorder struct {
	*recorder
	flushed chan string
}

func (w *flushRecorder) Flush() {
	w.mu.Lock()
	s := w.body.String()
	w.mu.Unlock()
	select {
	case w.flushed <- s:
	default:
	}
}

// A streamed body (chunked, Content-Length or close-delimited) reaches the
// client as the backend produces it: what arrived is flushed when the
// backend pauses, before it sends more.
func TestStreamFlushedWhenBackendPauses(t *testing.T) {
	for _, framing := range []string{"chunked", "length", "close"} {
		t.Run(framing, func(t *testing.T) {
			w := &flushRecorder{recorder: newRecorder(), flushed: make(chan string, 8)}
			late := make(chan string, 1)
			addr := rawBackend(t, func(c net.Conn) {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				var first, second, head string
				switch framing {
				case "chunked":
					head, first, second = "Transfer-Encoding: chunked\r\n", "5\r\nfirst\r\n", "6\r\nsecond\r\n0\r\n\r\n"
				case "length":
					head, first, second = "Content-Length: 11\r\n", "first", "second"
				case "close":
					head, first, second = "Connection: close\r\n", "first", "second"
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\n"+head+"\r\n"+first)
				select {
				case s := <-w.flushed:
					late <- s
				case <-time.After(5 * time.Second):
					late <- "(no flush while the backend paused)"
				}
				io.WriteString(c, second)
			})
			c := testClient(Options{})
			defer c.Close()
			res := c.Host("http", addr).Forward(w, &Outbound{Req: httptest.NewRequest("GET", "http://x.test/", nil)})
			if res.Err != nil || w.body.String() != "firstsecond" {
				t.Fatalf("got %q %v", w.body.String(), res.Err)
			}
			if s := <-late; s != "first" {
				t.Fatalf("flushed %q while the backend paused, want %q", s, "first")
			}
		})
	}
}

// Over TLS (where the body is read through tls.Conn and the client is
// flushed before every read), a large chunked body arrives whole, and a
// pause in the stream flushes what arrived.
func TestChunkedBodyOverTLS(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	cs := randomChunked(rng)
	for len(cs.data) < 100000 {
		cs = randomChunked(rng)
	}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		half := len(cs.data) / 2
		w.Write(cs.data[:half])
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond)
		w.Write(cs.data[half:])
	}))
	s.StartTLS()
	defer s.Close()
	c := New(Options{TLS: &tls.Config{InsecureSkipVerify: true}, DisableHTTP2: true})
	defer c.Close()
	w := &flushRecorder{recorder: newRecorder(), flushed: make(chan string, 64)}
	res := c.Host("https", strings.TrimPrefix(s.URL, "https://")).Forward(w, &Outbound{Req: httptest.NewRequest("GET", "https://x.test/", nil)})
	if res.Err != nil || w.body.String() != string(cs.data) {
		t.Fatalf("got %d bytes (want %d), %v", w.body.Len(), len(cs.data), res.Err)
	}
	if len(w.flushed) == 0 {
		t.Fatal("no flush while the stream paused")
	}
}

// A body that breaks (the backend closes inside it) still delivers, and
// flushes, what arrived intact before the break: the client sees the head
// and those bytes before the abort, not an empty reply. The backend
// sends everything at once and closes, so no read would wait before the
// break (the flush on a pause cannot be what delivers it).
func TestBrokenBodyDeliversWhatArrived(t *testing.T) {
	for _, framing := range []string{"chunked", "length"} {
		t.Run(framing, func(t *testing.T) {
			w := &flushRecorder{recorder: newRecorder(), flushed: make(chan string, 8)}
			addr := rawBackend(t, func(c net.Conn) {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				head, body := "Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n"
				if framing == "length" {
					head, body = "Content-Length: 100\r\n", "hello"
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\n"+head+"\r\n"+body)
			})
			c := testClient(Options{})
			defer c.Close()
			res := c.Host("http", addr).Forward(w, &Outbound{Req: httptest.NewRequest("GET", "http://x.test/", nil)})
			if res.Err == nil || !res.Sent {
				t.Fatalf("err %v sent %v, want an error after the head", res.Err, res.Sent)
			}
			var last string
			for len(w.flushed) > 0 {
				last = <-w.flushed
			}
			if last != "hello" {
				t.Fatalf("last flush before the abort delivered %q, want %q", last, "hello")
			}
		})
	}
}
