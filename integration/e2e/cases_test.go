package e2e

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Case 030 (passed before issue 15; kept as a regression test), through
// the binary: an event stream is relayed event by event, with and without
// the compress middleware and a gzip-accepting client. The backend writes
// event n+1 only once the client has read event n, so a proxy that holds
// data (until 1024 bytes, or the end) makes the test time out instead of
// passing slowly.
func TestCase030EventStreamFlushedWithCompress(t *testing.T) {
	read := make(chan int)
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for n := range 3 {
			fmt.Fprintf(w, "data: {\"n\":%d}\n\n", n)
			w.(http.Flusher).Flush()
			select {
			case <-read:
			case <-time.After(15 * time.Second):
				return
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(be.Close)
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    ev:  {rule: "Host(`+"`ev.example.com`"+`)", service: s}
    evz: {rule: "Host(`+"`evz.example.com`"+`)", service: s, middlewares: [z]}
  middlewares:
    z: {compress: {}}
  services:
    s: {loadBalancer: {servers: [{url: %q}]}}
`, be.URL))
	for _, host := range []string{"ev.example.com", "evz.example.com"} {
		req, _ := http.NewRequest("GET", p.URL(t, "web", "/events"), nil)
		req.Host = host
		req.Header.Set("Accept-Encoding", "gzip, br, zstd") // set by hand: no transparent decoding
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		var body io.Reader = resp.Body
		switch resp.Header.Get("Content-Encoding") {
		case "gzip":
			if body, err = gzip.NewReader(resp.Body); err != nil {
				t.Fatalf("%s: %v", host, err)
			}
		case "zstd":
			d, err := zstd.NewReader(resp.Body, zstd.WithDecoderConcurrency(1))
			if err != nil {
				t.Fatalf("%s: %v", host, err)
			}
			defer d.Close()
			body = d
		}
		br := bufio.NewReader(body)
		for n := range 3 {
			line, err := br.ReadString('\n')
			if err != nil || line != fmt.Sprintf("data: {\"n\":%d}\n", n) {
				t.Fatalf("%s (Content-Encoding %q): event %d: %q, %v", host, resp.Header.Get("Content-Encoding"), n, line, err)
			}
			_, _ = br.ReadString('\n')
			read <- n
		}
		resp.Body.Close()
	}
}

// Case 031 (passed before issue 15; kept as a regression test), through
// the binary with a headers middleware: with Expect: 100-continue the
// client gets the backend's final status (401 without the body being read,
// 201 after it, 204 when the backend ignores Expect), the middleware's
// header, and at most one 100 Continue.
func TestCase031ExpectContinueFinalStatus(t *testing.T) {
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/reject":
			w.Header().Set("WWW-Authenticate", `Basic realm="up"`)
			w.WriteHeader(http.StatusUnauthorized)
		case "/create":
			n, _ := io.Copy(io.Discard, r.Body)
			w.Header().Set("Location", fmt.Sprintf("/files/%d", n))
			w.WriteHeader(http.StatusCreated)
		case "/ignore":
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(be.Close)
	p := startProxy(t, map[string]string{"web": ""}, "", fmt.Sprintf(`
http:
  routers:
    up: {rule: "Host(`+"`up.example.com`"+`)", service: s, middlewares: [hdr]}
  middlewares:
    hdr: {headers: {customResponseHeaders: {X-Frame-Options: DENY}}}
  services:
    s: {loadBalancer: {servers: [{url: %q}]}}
`, be.URL))
	const size = 64 << 10
	for _, tc := range []struct {
		path     string
		code     int
		header   string // a response field that must be there
		sendBody bool   // the body is sent after a 100 Continue
	}{
		{"/reject", 401, "Www-Authenticate", false},
		{"/create", 201, "Location", true},
		{"/ignore", 204, "", true},
	} {
		c, err := net.DialTimeout("tcp", p.EntryPoints["web"], 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: up.example.com\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", tc.path, size)
		br := bufio.NewReader(c)
		continues := 0
		var resp *http.Response
		for {
			resp, err = http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%s: %v", tc.path, err)
			}
			if resp.StatusCode != http.StatusContinue {
				break
			}
			continues++
			if tc.sendBody {
				if _, err := c.Write(make([]byte, size)); err != nil {
					t.Fatalf("%s: body: %v", tc.path, err)
				}
			}
		}
		if resp.StatusCode != tc.code || continues > 1 || resp.Header.Get("X-Frame-Options") != "DENY" || tc.header != "" && resp.Header.Get(tc.header) == "" {
			t.Errorf("%s: final %d after %d×100, headers %v; want %d, at most one 100, X-Frame-Options and %s", tc.path, resp.StatusCode, continues, resp.Header, tc.code, tc.header)
		}
		if tc.path == "/create" && (continues != 1 || resp.Header.Get("Location") != fmt.Sprintf("/files/%d", size)) {
			t.Errorf("/create: %d×100, Location %q; want one 100 and the whole body read", continues, resp.Header.Get("Location"))
		}
		c.Close()
	}
}

// Case 033 (passed before issue 15; kept as a regression test), through
// the binary: cookie-less requests are balanced (3 per server over 9), each
// carries the sticky cookie with the configured name and flags, a pinned
// client stays on its server, and an unknown cookie value is a fresh pick
// with a new cookie, not an error.
func TestCase033StickyCookie(t *testing.T) {
	var urls []string
	for i := range 3 {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "s%d", i) }))
		t.Cleanup(s.Close)
		urls = append(urls, fmt.Sprintf("{url: %q}", s.URL))
	}
	p := startProxy(t, map[string]string{"web": ""}, "", `
http:
  routers:
    app: {rule: "Host(`+"`app.example.com`"+`)", service: app}
  services:
    app:
      loadBalancer:
        sticky: {cookie: {name: app_lb, secure: true, httpOnly: true}}
        servers: [`+strings.Join(urls, ", ")+`]
`)
	get := func(cookie string) (string, *http.Cookie) {
		t.Helper()
		req, _ := http.NewRequest("GET", p.URL(t, "web", "/"), nil)
		req.Host = "app.example.com"
		if cookie != "" {
			req.Header.Set("Cookie", "app_lb="+cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, c := range resp.Cookies() {
			if c.Name == "app_lb" {
				return string(b), c
			}
		}
		return string(b), nil
	}
	count := map[string]int{}
	pins := map[string]string{} // cookie value -> server
	for range 9 {
		srv, c := get("")
		count[srv]++
		if c == nil || !c.HttpOnly || !c.Secure || c.Path != "/" {
			t.Fatalf("cookie-less request to %s: cookie %+v, want app_lb; Path=/; HttpOnly; Secure", srv, c)
		}
		if strings.Contains(c.Value, "127.0.0.1") {
			t.Errorf("cookie value %q is the raw server URL, want an opaque hash", c.Value)
		}
		pins[c.Value] = srv
	}
	if count["s0"] != 3 || count["s1"] != 3 || count["s2"] != 3 {
		t.Errorf("9 cookie-less requests went %v, want 3 per server", count)
	}
	for v, srv := range pins {
		for range 5 {
			if got, _ := get(v); got != srv {
				t.Errorf("pinned to %s by %q, went to %s", srv, v, got)
			}
		}
	}
	if srv, c := get("deadbeef"); c == nil || c.Value == "deadbeef" || srv == "" {
		t.Errorf("unknown cookie: served by %q, cookie %+v; want a fresh pick and a new cookie", srv, c)
	}
}
