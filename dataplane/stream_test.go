package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// SSE events arrive one by one: the backend sends the next event only after
// the client has read the previous one through the proxy, so a buffering
// proxy would deadlock (and the test time out) instead of passing.
func TestSSEFlushedPerEvent(t *testing.T) {
	next := make(chan struct{})
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: event %d\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
		}
	}))
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {responseForwarding: {flushInterval: 1h}, servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	// A buffering proxy would stall the stream: fail after 10s, not hang.
	resp, err := (&http.Client{Transport: dptest.Client.Transport, Timeout: 10 * time.Second}).Get("http://" + h.Addr("web") + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for i := range 3 {
		line, err := br.ReadString('\n')
		if err != nil || line != fmt.Sprintf("data: event %d\n", i) {
			t.Fatalf("event %d: got %q, %v", i, line, err)
		}
		br.ReadString('\n')
		next <- struct{}{}
	}
}

// Case 035: request bodies are streamed to the backend as they arrive
// (the backend sees the first part before the client sent the rest), a
// chunked upload keeps its exact byte count without a made-up
// Content-Length, and readTimeout 0 removes the whole-request limit.
func TestUploadStreamed(t *testing.T) {
	got := make(chan string, 1)
	firstPart := make(chan struct{})
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 5)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		close(firstPart)
		n, _ := io.Copy(io.Discard, r.Body)
		got <- fmt.Sprintf("cl=%d te=%v n=%d", r.ContentLength, r.TransferEncoding, n+5)
		w.WriteHeader(http.StatusCreated)
	}))
	zero := config.Duration(0)
	h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0",
		Transport: &static.EntryTransport{RespondingTimeouts: &static.RespondingTimeouts{ReadTimeout: &zero}}}}, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPut, "http://"+h.Addr("web")+"/files/big.bin", pr)
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := dptest.Client.Do(req)
		done <- result{resp, err}
	}()
	io.WriteString(pw, "hello")
	<-firstPart // the backend read the first bytes while the upload is still open
	io.WriteString(pw, strings.Repeat("x", 1<<20))
	pw.Close()
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	res.resp.Body.Close()
	if res.resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d, want 201", res.resp.StatusCode)
	}
	if g, want := <-got, fmt.Sprintf("cl=-1 te=[chunked] n=%d", 5+1<<20); g != want {
		t.Errorf("backend saw %s, want %s", g, want)
	}
}

// Weights 3:1 give exactly 3:1 with smooth WRR (within ±5 % over 1000
// requests is the end-to-end bar; in-process it is exact), weight 0 never.
func TestWeightsThroughProxy(t *testing.T) {
	a, b, z := dptest.EchoBackend(t, "a"), dptest.EchoBackend(t, "b"), dptest.EchoBackend(t, "zero")
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q, weight: 3}, {url: %q, weight: 1}, {url: %q, weight: 0}]}}}
`, a.URL, b.URL, z.URL), generation.Options{})
	counts := map[string]int{}
	for range 1000 {
		_, body := h.Get("web", "x", "/")
		counts[dptest.EchoHeader(body, "Name")]++
	}
	if counts["a"] != 750 || counts["b"] != 250 || counts["zero"] != 0 {
		t.Errorf("got %v, want a:750 b:250 zero:0", counts)
	}
}

// Case 035 E1: an upload still running when readTimeout (whole request)
// expires is cut with a clear 408, not an ambiguous 502/504, and the
// backend is not blamed.
func TestUploadCutByReadTimeoutIs408(t *testing.T) {
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
	}))
	rt := config.Duration(300 * time.Millisecond)
	obs := &dptest.Recorder{}
	h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0",
		Transport: &static.EntryTransport{RespondingTimeouts: &static.RespondingTimeouts{ReadTimeout: &rt}}}}, obs)
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {passiveHealthCheck: {maxFailedAttempts: 1}, servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	c, err := net.Dial("tcp", h.Addr("web"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "PUT /files/big.bin HTTP/1.1\r\nHost: up\r\nContent-Length: 1000000\r\n\r\nfirst bytes")
	// Send nothing more: the entrypoint's readTimeout cuts the upload.
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response after the read timeout: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("got %d, want 408", resp.StatusCode)
	}
	if !h.Backend(be.URL).Up {
		t.Error("the backend was marked down for a slow client")
	}
}
