package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// forgingBackend keeps its connections alive and, 50 ms after each genuine
// response, writes a second, forged response nobody asked for. It returns
// its address.
func forgingBackend(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, r.Body)
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\ngenuine")
					time.Sleep(50 * time.Millisecond)
					if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged"); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

// Issue 26, through the binary: bytes a backend writes unasked on an idle
// keep-alive connection (a forged response 50 ms after each real one) never
// become the next client's response. Two clients 0.3 s apart — a GET, the
// replayable request for which the liveness check used to be skipped on a
// connection idle under 1 s — and every answer must be the genuine one.
func TestUnaskedBackendBytesNeverAnswerTheNextClient(t *testing.T) {
	be := forgingBackend(t)
	p := startProxy(t, map[string]string{"web": ""}, "", oneRoute("poison.test", "http://"+be, ""))
	url := p.URL(t, "web", "/")
	for i := range 8 {
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodGet, http.MethodPost} {
			r, err := harness.Get(url, harness.Host("poison.test"), harness.Method(m))
			if err != nil {
				t.Fatalf("round %d %s: %v", i, m, err)
			}
			want := "genuine"
			if m == http.MethodHead {
				want = ""
			}
			if r.StatusCode != http.StatusOK || r.Body != want {
				t.Fatalf("round %d %s: got %d %q, want 200 %q: a backend's unasked bytes answered this client", i, m, r.StatusCode, r.Body, want)
			}
			if cl := r.Header.Get("Content-Length"); m == http.MethodHead && cl != "7" {
				t.Fatalf("round %d HEAD: Content-Length %q, want the genuine 7", i, cl)
			}
			time.Sleep(300 * time.Millisecond) // the forged bytes arrive meanwhile
		}
	}
}
