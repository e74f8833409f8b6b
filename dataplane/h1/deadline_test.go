package h1

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"
)

// http.ResponseController's SetReadDeadline while another goroutine reads
// the body (full duplex, as the proxy does): no data race (run with
// -race), and the handler's deadline is the one that holds — the body's
// per-read ReadTimeout (an hour here) never overwrites it.
func TestSetReadDeadlineWhileBodyIsRead(t *testing.T) {
	addr := startServer(t, &Server{ReadTimeout: time.Hour, ReadHeaderTimeout: 2 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			type result struct {
				n   int64
				err error
			}
			res := make(chan result, 1)
			go func() {
				n, err := io.Copy(io.Discard, r.Body)
				res <- result{n, err}
			}()
			for range 500 {
				if err := rc.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
					t.Error(err)
				}
			}
			if err := rc.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
				t.Error(err)
			}
			select {
			case got := <-res:
				fmt.Fprintf(w, "n=%d deadline=%v", got.n, errors.Is(got.err, os.ErrDeadlineExceeded))
			case <-time.After(5 * time.Second):
				t.Error("the handler's read deadline did not cut the body read")
				<-res // the server cuts it when the handler returns
			}
		})})
	c, br := rawConn(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
	sent := 0
	for range 200 { // a body that keeps coming while the deadline changes
		io.WriteString(c, "5\r\nhello\r\n")
		sent += 5
	}
	// ... and then stalls: only the handler's deadline can end the read.
	_, body := readResp(t, br, "POST")
	if want := fmt.Sprintf("n=%d deadline=true", sent); body != want {
		t.Fatalf("got %q, want %q", body, want)
	}
}

// A later request's header timeout is armed when its head needs a second
// read (it is not armed per request, only then): a head split over two
// writes 300 ms apart is served — neither the idle wait's handoff deadline
// (idleHandoff, shorter) nor a stale one cuts it — and a head that stalls
// is cut at ReadHeaderTimeout, not at the idle timeout.
func TestLaterHeadSplitAcrossReads(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }),
		ReadHeaderTimeout: time.Second, IdleTimeout: 10 * time.Second}
	addr := startServer(t, s)
	c, br := rawConn(t, addr)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	for i := range 3 { // busy: the handoff deadline stays armed from wait to wait
		fmt.Fprintf(c, "GET /%d HTTP/1.1\r\nHost: h\r\n\r\n", i)
		if _, body := readResp(t, br, "GET"); body != fmt.Sprint("/", i) {
			t.Fatalf("request %d: %q", i, body)
		}
	}
	io.WriteString(c, "GET /split HTTP/1.1\r\n")
	time.Sleep(300 * time.Millisecond)
	io.WriteString(c, "Host: h\r\n\r\n")
	if _, body := readResp(t, br, "GET"); body != "/split" {
		t.Fatalf("split head: %q", body)
	}
	io.WriteString(c, "GET /stall HTTP/1.1\r\n")
	start := time.Now()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("stalled head: want the connection closed, got %v", err)
	}
	if d := time.Since(start); d < 800*time.Millisecond {
		t.Fatalf("stalled head cut after %v, before ReadHeaderTimeout (1 s)", d)
	}
}
