package h1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// bodyOf is the body served for /n=<size>: size bytes that tell one
// response from another of a different size.
func bodyOf(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte('a' + (i*7+size)%26)
	}
	return b
}

// TestKeepAliveLosesNoRequest sends requests, one at a time, on 6
// keep-alive connections, as a browser does, in every state a connection
// waits for its next request in, and wants each answered with its own
// body: right after the last response (on the serving goroutine), about
// idleHandoff later (while it moves to the parker), after it parked, and
// while the handler of the last request still runs after its whole
// response was sent (Content-Length: the client sends at once and the
// watch of a slow bodyless request reads the next head). Bodies of up to
// 40 KiB are written through, buffered, chunked or flushed; handlers
// sleep before or after writing (up to 250 ms, past watchAfter).
func TestKeepAliveLosesNoRequest(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		size, _ := strconv.Atoi(q.Get("n"))
		pre, _ := strconv.Atoi(q.Get("pre"))
		post, _ := strconv.Atoi(q.Get("post"))
		time.Sleep(time.Duration(pre) * time.Millisecond)
		if q.Get("cl") == "1" {
			w.Header().Set("Content-Length", strconv.Itoa(size))
		}
		for b := bodyOf(size); len(b) > 0; {
			k := min(len(b), 32<<10) // as io.Copy hands it over
			w.Write(b[:k])
			b = b[k:]
		}
		if q.Get("flush") == "1" {
			w.(http.Flusher).Flush()
		}
		time.Sleep(time.Duration(post) * time.Millisecond)
	})
	addr := startServer(t, &Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute})
	const conns, requests = 6, 60
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			br := bufio.NewReader(c)
			for i := range requests {
				time.Sleep(keepAlivePause())
				size := rand.IntN(40<<10) + 1
				pre, post := 0, 0
				if rand.IntN(3) == 0 {
					pre = rand.IntN(250)
				}
				if rand.IntN(3) == 0 {
					post = rand.IntN(250)
				}
				target := fmt.Sprintf("/?n=%d&pre=%d&post=%d&cl=%d&flush=%d", size, pre, post, rand.IntN(2), rand.IntN(2))
				c.SetDeadline(time.Now().Add(20 * time.Second))
				if _, err := io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
					t.Errorf("request %d %s: %v", i, target, err)
					return
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Errorf("request %d %s: no response: %v", i, target, err)
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || !bytes.Equal(b, bodyOf(size)) || resp.Close {
					t.Errorf("request %d %s: status %d, %d body bytes (want %d), close %v, %v", i, target, resp.StatusCode, len(b), size, resp.Close, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// keepAlivePause is how long a connection of TestKeepAliveLosesNoRequest
// waits before its next request: none, a few microseconds, around
// idleHandoff, around watchAfter, or up to three times idleHandoff.
func keepAlivePause() time.Duration {
	switch rand.IntN(5) {
	case 0:
		return 0
	case 1:
		return time.Duration(rand.IntN(3000)) * time.Microsecond
	case 2:
		return idleHandoff - 5*time.Millisecond + time.Duration(rand.IntN(10000))*time.Microsecond
	case 3:
		return watchAfter - 5*time.Millisecond + time.Duration(rand.IntN(10000))*time.Microsecond
	}
	return time.Duration(rand.IntN(int(3 * idleHandoff)))
}
