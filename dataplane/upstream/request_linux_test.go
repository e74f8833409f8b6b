package upstream

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// dataSegsOut is the number of data segments the kernel sent on c.
func dataSegsOut(t *testing.T, c net.Conn) uint32 {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *unix.TCPInfo
	var serr error
	if err := rc.Control(func(fd uintptr) { info, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	return info.Data_segs_out
}

// A small request body of known length (up to syncBodyMax) leaves with
// its head in one write: one data segment on the backend connection for
// head and body (4 KiB, more than fits next to the head in the 4 KiB write
// buffer, and 16 KiB), and the backend gets them whole.
func TestSmallBodySentWithTheHeadInOneSegment(t *testing.T) {
	var got atomic.Value
	addr := rawBackend(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			b, _ := io.ReadAll(req.Body)
			got.Store(string(b))
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	c := testClient(Options{})
	defer c.Close()
	h := c.Host("http", addr)
	if _, res := forward(t, c, addr, httptest.NewRequest("GET", "http://x.test/", nil)); res.Err != nil {
		t.Fatal(res.Err)
	}
	for _, size := range []int{4096, syncBodyMax} {
		pc := <-h.idle
		h.idle <- pc
		before := dataSegsOut(t, pc.c)
		body := strings.Repeat("b", size)
		if _, res := forward(t, c, addr, httptest.NewRequest("POST", "http://x.test/up", strings.NewReader(body))); res.Err != nil {
			t.Fatal(res.Err)
		}
		if g := got.Load(); g != body {
			t.Fatalf("%d bytes: the backend got %d bytes", size, len(g.(string)))
		}
		if n := dataSegsOut(t, pc.c) - before; n != 1 {
			t.Fatalf("%d-byte body: head and body took %d data segments, want 1", size, n)
		}
	}
}

// A small body shorter than its Content-Length is the client's error
// (400), and nothing of the request reaches the backend.
func TestSmallBodyShortIsClientErrorNothingSent(t *testing.T) {
	var reqs atomic.Int32
	ended := make(chan struct{})
	addr := rawBackend(t, func(c net.Conn) {
		defer close(ended)
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			reqs.Add(1)
		}
	})
	c := testClient(Options{})
	defer c.Close()
	r := httptest.NewRequest("POST", "http://x.test/up", strings.NewReader("short"))
	r.ContentLength = 100
	_, res := forward(t, c, addr, r)
	if ce, ok := res.Err.(*ClientError); !ok || ce.Err != io.ErrUnexpectedEOF {
		t.Fatalf("got %v, want a ClientError(unexpected EOF)", res.Err)
	}
	<-ended // the connection was closed, not kept
	if n := reqs.Load(); n != 0 {
		t.Fatalf("the backend got %d requests", n)
	}
}
