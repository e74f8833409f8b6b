package h1

import (
	"net/http"
	"testing"
)

// browserHead is a request head as a browser sends it (about 600 bytes,
// 12 field lines); wrkHead is the load client's of integration/bench.
const (
	browserHead = "GET /assets/app.js?v=3 HTTP/1.1\r\n" +
		"Host: bench.local\r\n" +
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
		"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
		"Accept-Language: en-US,en;q=0.5\r\n" +
		"Accept-Encoding: gzip, deflate, br, zstd\r\n" +
		"Referer: https://bench.local/index.html\r\n" +
		"Connection: keep-alive\r\n" +
		"Cookie: session=4f2a9c1e7b3d8a6f0e5c2b1d9a8f7e6d; theme=dark; lang=en\r\n" +
		"Sec-Fetch-Dest: script\r\n" +
		"Sec-Fetch-Mode: no-cors\r\n" +
		"Sec-Fetch-Site: same-origin\r\n" +
		"If-None-Match: \"692d6f00-400\"\r\n\r\n"
	wrkHead = "GET /1k HTTP/1.1\r\nHost: bench.local\r\n\r\n"
)

// BenchmarkReadHead is the per-request work of finding a request head that
// arrived whole in the read buffer (readHead, no socket read) and parsing
// it into the connection's reused header map and memory (parseHead).
func BenchmarkReadHead(b *testing.B) {
	for _, tc := range []struct{ name, head string }{{"browser", browserHead}, {"wrk", wrkHead}} {
		b.Run(tc.name, func(b *testing.B) {
			cs := &conn{srv: &Server{}, buf: []byte(tc.head), served: true}
			var hdr http.Header
			mem := new(headMem)
			b.ReportAllocs()
			c0 := cpuTime(b)
			for b.Loop() {
				cs.r, cs.w = 0, len(cs.buf)
				end, herr, ok := cs.readHead()
				if herr != nil || !ok || end != len(cs.buf) {
					b.Fatalf("readHead: %d %v %v", end, herr, ok)
				}
				h := head{header: hdr, mem: mem}
				if herr := parseHead(cs.buf[:end], &h, DefaultMaxHeaders); herr != nil {
					b.Fatal(herr)
				}
				hdr = h.header
			}
			b.ReportMetric(float64(cpuTime(b)-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}
