//go:build !race

// The race detector's instrumentation allocates, so allocation counts are
// asserted only without it: scripts/test.sh's "allocation and memory
// assertions" step runs these (-run 'DoesNotAllocate|SessionMemory').

package h1

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A keep-alive GET costs the server one allocation (the string holding
// the head, whose substrings the fields are): the Request, URL, header
// maps and context are the connection's (see reuse).
func TestKeepAliveRequestDoesNotAllocateBeyondItsHead(t *testing.T) {
	cl := []string{"2"}
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Length"] = cl
		w.Header()["Content-Type"] = cl
		io.WriteString(w, "ok")
	}))
	c, br := rawConn(t, addr)
	req := []byte("GET /a?b=c HTTP/1.1\r\nHost: h\r\nUser-Agent: t\r\nAccept: */*\r\nX-Forwarded-For: 192.0.2.1\r\n\r\n")
	c.Write(req)
	readResp(t, br, "GET")
	// The response has a fixed length (the Date is IMF-fixdate).
	c.Write(req)
	var resp []byte
	for !strings.HasSuffix(string(resp), "\r\n\r\nok") {
		b, err := br.ReadByte()
		if err != nil {
			t.Fatal(err)
		}
		resp = append(resp, b)
	}
	buf := make([]byte, len(resp))
	n := testing.AllocsPerRun(500, func() {
		c.SetDeadline(time.Time{})
		c.Write(req)
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Fatalf("%.1f allocations per keep-alive request, want at most 1", n)
	}
}
