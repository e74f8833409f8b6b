package upstream

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkForwardPost4k forwards a 4 KiB upload (Content-Length) over a
// kept-alive connection to a raw backend that reads the head and the body
// and answers "ok": the upload path's allocations per request.
func BenchmarkForwardPost4k(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReaderSize(c, 16<<10)
				body := make([]byte, 4096)
				for {
					n := 0
					for {
						line, err := br.ReadSlice('\n')
						if err != nil {
							return
						}
						if len(line) == 2 {
							break
						}
						if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
							n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
						}
					}
					if _, err := io.ReadFull(br, body[:n]); err != nil {
						return
					}
					if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")); err != nil {
						return
					}
				}
			}()
		}
	}()
	c := New(Options{})
	defer c.Close()
	h := c.Host("http", ln.Addr().String())
	payload := strings.Repeat("x", 4096)
	sr := strings.NewReader(payload)
	r := httptest.NewRequest("POST", "http://x.test/upload", nil)
	body := io.NopCloser(sr)
	w := newRecorder()
	ob := &Outbound{Req: r}
	b.ReportAllocs()
	for b.Loop() {
		sr.Reset(payload)
		r.Body, r.ContentLength = body, int64(len(payload))
		clear(w.header)
		w.body.Reset()
		w.status = 0
		*ob = Outbound{Req: r}
		if res := h.Forward(w, ob); res.Err != nil || w.status != http.StatusOK {
			b.Fatal(res.Err, w.status)
		}
	}
}
