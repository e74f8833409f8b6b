package dataplane

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// An entrypoint replaced with new settings on the same address keeps its
// port and its sockets: new connections made throughout the change all get
// an answer, a request in flight on the old settings completes, and the
// new settings (forwardedHeaders.insecure) apply. Replaced onto another
// address, the new port serves and the old one is closed; a bind failure
// leaves the entrypoint serving as before; an unknown name is an error.
func TestReplaceEntryPoint(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("wait") != "" {
			arrived <- struct{}{}
			<-release
		}
		fmt.Fprint(w, "xff=", r.Header.Get("X-Forwarded-For"))
	}))
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	defer unblock() // a failure must not leave the backend handler waiting
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers:
    w@file: {rule: "Host(`+"`web.test`"+`)", entryPoints: [web], service: s@file}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	web := h.Addr("web")
	get := func(addr string) (string, error) {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: web.test\r\nX-Forwarded-For: 203.0.113.7\r\nConnection: close\r\n\r\n"); err != nil {
			return "", err
		}
		b, err := io.ReadAll(c)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(string(b), "HTTP/1.1 200") {
			return "", fmt.Errorf("answer %.60q", b)
		}
		_, body, _ := strings.Cut(string(b), "\r\n\r\n")
		return body, nil
	}
	if body, err := get(web); err != nil || body != "xff=127.0.0.1" {
		t.Fatalf("before: %q %v, want the untrusted X-Forwarded-For replaced", body, err)
	}

	inflight := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+web+"/?wait=1", nil)
		req.Host = "web.test"
		resp, err := dptest.Client.Do(req)
		if err != nil {
			inflight <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		inflight <- fmt.Sprint(resp.StatusCode, " ", string(b))
	}()
	<-arrived

	// New connections, one after another, across the replacement.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sent int
	var failures []string
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := get(web)
				mu.Lock()
				sent++
				if err != nil && len(failures) < 5 {
					failures = append(failures, err.Error())
				}
				mu.Unlock()
			}
		})
	}
	// A client that connected to the old settings but has not sent its
	// request yet: a new client, to be served, not cut by their drain.
	silent, err := net.Dial("tcp", web)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	time.Sleep(100 * time.Millisecond) // accepted by the old settings
	cfg := &static.EntryPoint{Address: web, ForwardedHeaders: &static.ForwardedHeaders{Insecure: true}}
	done, err := h.Srv.ReplaceEntryPoint(context.Background(), "web", cfg, 2*time.Second)
	if err != nil {
		t.Fatalf("ReplaceEntryPoint: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	_ = silent.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(silent, "GET / HTTP/1.1\r\nHost: web.test\r\nConnection: close\r\n\r\n"); err != nil {
		t.Errorf("the client accepted before the replacement: write: %v", err)
	}
	if b, err := io.ReadAll(silent); err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 200") {
		t.Errorf("the client accepted before the replacement, request sent after: %.60q %v, want 200", b, err)
	}
	if len(failures) > 0 || sent < 10 {
		t.Errorf("%d new connections across the replacement, failures: %q", sent, failures)
	}
	if got := h.Addr("web"); got != web {
		t.Errorf("address after the replacement %s, want %s", got, web)
	}
	if body, err := get(web); err != nil || body != "xff=203.0.113.7, 127.0.0.1" {
		t.Errorf("after: %q %v, want the client's X-Forwarded-For kept (insecure)", body, err)
	}
	unblock()
	if r := <-inflight; r != "200 xff=127.0.0.1" {
		t.Errorf("request in flight on the old settings: %q", r)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("the old settings' drain did not end")
	}

	// Onto another address: bound first, the old port closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other := l.Addr().String()
	// Busy: refused, the entrypoint serves as before.
	if _, err := h.Srv.ReplaceEntryPoint(context.Background(), "web", &static.EntryPoint{Address: other}, time.Second); err == nil || !strings.Contains(err.Error(), "entrypoint web") {
		t.Errorf("replace onto a busy port: %v, want an error naming the entrypoint", err)
	}
	if _, err := get(web); err != nil {
		t.Errorf("after a failed replacement the entrypoint does not serve: %v", err)
	}
	l.Close()
	done, err = h.Srv.ReplaceEntryPoint(context.Background(), "web", &static.EntryPoint{Address: other}, time.Second)
	if err != nil {
		t.Fatalf("replace onto %s: %v", other, err)
	}
	if _, err := get(other); err != nil {
		t.Errorf("the new address does not serve: %v", err)
	}
	<-done
	if !refused(web) {
		t.Errorf("the old address %s still accepts", web)
	}
	if _, err := h.Srv.ReplaceEntryPoint(context.Background(), "nope", cfg, 0); err == nil {
		t.Error("replacing an unknown entrypoint: no error")
	}
}
