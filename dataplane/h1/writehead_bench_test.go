package h1

import (
	"bufio"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSendHeader is the serialisation of a proxied 200 response's
// head (a backend's usual fields) into the connection's buffer: the per
// response work of sendHeader without the socket.
func BenchmarkSendHeader(b *testing.B) {
	cs := &conn{srv: &Server{}}
	req := &http.Request{Method: http.MethodGet}
	hdr := http.Header{
		"Content-Type":   {"text/html; charset=utf-8"},
		"Content-Length": {"1024"},
		"Server":         {"nginx/1.22.1"},
		"Last-Modified":  {"Tue, 01 Dec 2026 10:00:00 GMT"},
		"Etag":           {`"692d6f00-400"`},
		"Accept-Ranges":  {"bytes"},
	}
	bw := bufio.NewWriterSize(io.Discard, 4<<10)
	w := &response{cs: cs}
	b.ReportAllocs()
	c0 := cpuTime(b)
	for b.Loop() {
		w.reset(bw, req, &head{}, nil, hdr)
		w.status, w.bodyAllowed = http.StatusOK, true
		w.sendHeader()
		bw.Reset(io.Discard)
	}
	b.ReportMetric(float64(cpuTime(b)-c0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user plus system CPU time so far (getrusage):
// on a shared machine, ns/op counts the waits for a CPU too.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
