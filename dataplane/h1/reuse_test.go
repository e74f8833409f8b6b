package h1

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The Request, its header maps and context are reused from request to
// request on a connection: what one handler changed or saw must never
// reach the next request.
func TestReusedRequestStateIsFreshEachRequest(t *testing.T) {
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.Context().Err(); err != nil {
			t.Errorf("%s: context already done: %v", r.URL.Path, err)
		}
		fmt.Fprintf(w, "path=%s pv=%q hdr=%d x=%q mut=%q pattern=%q resp=%d",
			r.URL.Path, r.PathValue("id"), len(r.Header), r.Header.Get("X-Req"), r.Header.Get("X-Mut"), r.Pattern, len(w.Header()))
		// Leave as much state behind as a handler can.
		r.Header.Set("X-Mut", "1")
		r.URL.Path = "/changed"
		r.SetPathValue("id", "7")
		r.Pattern = "/x/{id}"
		r.Form = map[string][]string{"a": {"b"}}
		w.Header().Set("X-Left", "1")
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET /one HTTP/1.1\r\nHost: h\r\nX-Req: a\r\nX-Other: b\r\n\r\n"+
		"GET /two HTTP/1.1\r\nHost: h\r\n\r\n")
	want := []string{
		`path=/one pv="" hdr=2 x="a" mut="" pattern="" resp=0`,
		`path=/two pv="" hdr=0 x="" mut="" pattern="" resp=0`,
	}
	for i, w := range want {
		if _, body := readResp(t, br, "GET"); body != w {
			t.Errorf("request %d saw %q, want %q", i+1, body, w)
		}
	}
}

// A request context that was waited on — Done, a derived context,
// context.AfterFunc — is cancelled when ServeHTTP returns, as net/http
// does (checked by the next pipelined request's handler, so the
// connection never goes idle meanwhile), and the next request on the
// connection gets a live one.
func TestRequestContextCancelledWhenHandlerReturns(t *testing.T) {
	type seen struct{ done, child, after chan struct{} }
	var prev *seen // requests on one connection run one after the other
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if prev != nil {
			for name, ch := range map[string]chan struct{}{"Done": prev.done, "derived": prev.child, "AfterFunc": prev.after} {
				select {
				case <-ch:
				case <-time.After(2 * time.Second):
					t.Errorf("%s: the previous request's context (%s) was not cancelled when its handler returned", r.URL.Path, name)
				}
			}
		}
		ctx := r.Context()
		if err := ctx.Err(); err != nil {
			t.Errorf("%s: context done at the start: %v", r.URL.Path, err)
		}
		s := &seen{make(chan struct{}), make(chan struct{}), make(chan struct{})}
		d := ctx.Done()
		go func() { <-d; close(s.done) }()
		child, cancel := context.WithTimeout(ctx, time.Hour)
		go func() { <-child.Done(); cancel(); close(s.child) }()
		context.AfterFunc(ctx, func() { close(s.after) })
		prev = s
		io.WriteString(w, "ok")
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, strings.Repeat("GET /n HTTP/1.1\r\nHost: h\r\n\r\n", 3))
	for i := range 3 {
		if _, body := readResp(t, br, "GET"); body != "ok" {
			t.Fatalf("request %d: %q", i, body)
		}
	}
}

// The context of a request nobody waited on is reused, but cancelling it
// when the client leaves still works on a later request.
func TestReusedContextStillCancelledWhenClientLeaves(t *testing.T) {
	cancelled := make(chan error, 1)
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fast" {
			return
		}
		select {
		case <-r.Context().Done():
			cancelled <- r.Context().Err()
		case <-time.After(5 * time.Second):
			cancelled <- nil
		}
	}))
	c, br := rawConn(t, addr)
	for range 3 {
		io.WriteString(c, "GET /fast HTTP/1.1\r\nHost: h\r\n\r\n")
		readResp(t, br, "GET")
	}
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
	time.Sleep(50 * time.Millisecond)
	c.(*net.TCPConn).SetLinger(0)
	c.Close()
	if err := <-cancelled; err != context.Canceled {
		t.Fatalf("slow request's context: %v, want context.Canceled", err)
	}
}

// Once a connection has sent a Content-Length body, the idle wait reads
// the next request into a BodyBufferSize buffer: a head and a 4 KiB body
// written at once arrive in one read (with the 4 KiB buffer the body
// needed a second read).
func TestBodyConnectionReadsHeadAndBodyAtOnce(t *testing.T) {
	const size = 4096
	buffered := make(chan int, 2)
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs := r.Body.(*body).cs
		buffered <- cs.w - cs.r // the body bytes that came with the head
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d %v", n, err)
	}))
	c, br := rawConn(t, addr)
	req := "POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 4096\r\n\r\n" + strings.Repeat("p", size)
	for i := range 2 {
		io.WriteString(c, req) // one write: head and body together
		if _, body := readResp(t, br, "POST"); body != "4096 <nil>" {
			t.Fatalf("request %d: %q", i+1, body)
		}
		got := <-buffered
		if i == 1 && got != size {
			t.Errorf("second request: %d body bytes read with the head, want all %d", got, size)
		}
	}
}
