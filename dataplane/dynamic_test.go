package dataplane

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
	"github.com/gantry-proxy/gantry/router"
)

// dynConfig routes Host(web.test) on web and Host(dyn.test) on dyn to url.
func dynConfig(url string) string {
	return fmt.Sprintf(`
http:
  routers:
    w@file: {rule: "Host(`+"`web.test`"+`)", entryPoints: [web], service: s@file}
    d@file: {rule: "Host(`+"`dyn.test`"+`)", entryPoints: [dyn], service: s@file}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, url)
}

// getOn sends GET / with Host host to addr on a new connection.
func getOn(addr, host string) (int, string, error) {
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	req.Host = host
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// refused reports whether a TCP connection to addr is refused.
func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// An entrypoint added to a running Server serves its routes (HTTP/1.1 and
// h2c) while a request in flight on another entrypoint completes; the names
// are listed; a second entrypoint of the same name, a UDP address and a busy
// port are refused with the entrypoint named, leaving nothing open.
func TestAddEntryPointWhileServing(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("wait") != "" {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		fmt.Fprint(w, "from ", r.Host)
	}))
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.EPs["dyn"] = &static.EntryPoint{Address: "127.0.0.1:0"}
	h.Apply(dynConfig(be.URL), generation.Options{})

	inflight := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+h.Addr("web")+"/?wait=1", nil)
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
	if err := h.Srv.AddEntryPoint(context.Background(), "dyn", h.EPs["dyn"]); err != nil {
		t.Fatalf("AddEntryPoint: %v", err)
	}
	if got := h.Srv.EntryPoints(); !slices.Equal(got, []string{"dyn", "web"}) {
		t.Errorf("EntryPoints() = %v, want [dyn web]", got)
	}
	dyn := h.Addr("dyn")
	if code, body, err := getOn(dyn, "dyn.test"); err != nil || code != 200 || body != "from dyn.test" {
		t.Errorf("GET dyn.test on the added entrypoint: %d %q %v, want 200 from dyn.test", code, body, err)
	}
	if code, _, err := getOn(dyn, "web.test"); err != nil || code != 404 {
		t.Errorf("GET web.test on dyn (a router of web only): %d %v, want 404", code, err)
	}
	// h2c with prior knowledge goes through the same machinery.
	c, err := net.Dial("tcp", dyn)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	hdr := make([]byte, 9)
	if _, err := io.ReadFull(c, hdr); err != nil || hdr[3] != 0x4 { // SETTINGS
		t.Errorf("h2c preface on the added entrypoint: frame %x %v, want a SETTINGS frame", hdr, err)
	}
	c.Close()
	close(release)
	if r := <-inflight; r != "200 from web.test" {
		t.Errorf("request in flight on web during the add: %q, want 200 from web.test", r)
	}

	if err := h.Srv.AddEntryPoint(context.Background(), "dyn", &static.EntryPoint{Address: "127.0.0.1:0"}); err == nil || !strings.Contains(err.Error(), "entrypoint dyn: already served") {
		t.Errorf("adding dyn twice: %v, want already served", err)
	}
	if err := h.Srv.AddEntryPoint(context.Background(), "dns", &static.EntryPoint{Address: "127.0.0.1:0/udp"}); err == nil || !strings.Contains(err.Error(), "entrypoint dns: address") || !strings.Contains(err.Error(), "udp is not supported") {
		t.Errorf("adding a UDP entrypoint: %v, want it refused naming dns", err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	busyAddr := busy.Addr().String()
	err = h.Srv.AddEntryPoint(context.Background(), "busy", &static.EntryPoint{Address: busyAddr})
	if err == nil || !strings.Contains(err.Error(), "entrypoint busy: listen on "+busyAddr) {
		t.Errorf("adding on a busy port: %v, want an error naming busy and %s", err, busyAddr)
	}
	busy.Close()
	if !refused(busyAddr) {
		t.Errorf("a listener is left on %s after the failed add", busyAddr)
	}
	if got := h.Srv.EntryPoints(); !slices.Equal(got, []string{"dyn", "web"}) {
		t.Errorf("EntryPoints() after refused adds = %v, want [dyn web]", got)
	}
}

// RemoveEntryPoint: when it returns new connections are refused; a request
// in flight completes within the grace period, its keep-alive connection is
// closed after the response; the other entrypoint is untouched; the name and
// port can be added again at once, while the old one still drains.
func TestRemoveEntryPointDrains(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("wait") != "" {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		fmt.Fprint(w, "from ", r.Host)
	}))
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.EPs["dyn"] = &static.EntryPoint{Address: "127.0.0.1:0"}
	if err := h.Srv.AddEntryPoint(context.Background(), "dyn", h.EPs["dyn"]); err != nil {
		t.Fatal(err)
	}
	h.Apply(dynConfig(be.URL), generation.Options{})
	dyn := h.Addr("dyn")

	c, err := net.Dial("tcp", dyn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /?wait=1 HTTP/1.1\r\nHost: dyn.test\r\n\r\n")
	<-arrived
	done, err := h.Srv.RemoveEntryPoint("dyn", 10*time.Second)
	if err != nil {
		t.Fatalf("RemoveEntryPoint: %v", err)
	}
	if !refused(dyn) {
		t.Errorf("a new connection to %s is not refused after RemoveEntryPoint returned", dyn)
	}
	if got := h.Srv.EntryPoints(); !slices.Equal(got, []string{"web"}) {
		t.Errorf("EntryPoints() = %v, want [web]", got)
	}
	if h.Srv.Addrs("dyn") != nil {
		t.Errorf("Addrs(dyn) after the removal: %v, want nil", h.Srv.Addrs("dyn"))
	}
	select {
	case <-done:
		t.Fatal("drain over with a request in flight")
	default:
	}
	// The name and the port are free while the old entrypoint drains.
	if err := h.Srv.AddEntryPoint(context.Background(), "dyn", &static.EntryPoint{Address: dyn}); err != nil {
		t.Fatalf("adding dyn again on %s while the old one drains: %v", dyn, err)
	}
	if code, body, err := getOn(dyn, "dyn.test"); err != nil || code != 200 || body != "from dyn.test" {
		t.Errorf("GET on the re-added dyn: %d %q %v", code, body, err)
	}
	close(release)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("in-flight response after the removal: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "from dyn.test" || !resp.Close {
		t.Errorf("in-flight response: %d %q close=%v, want 200 from dyn.test with Connection: close", resp.StatusCode, b, resp.Close)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("drain not over after its last request")
	}
	if code, _, err := getOn(h.Addr("web"), "web.test"); err != nil || code != 200 {
		t.Errorf("GET on web after removing dyn: %d %v", code, err)
	}
	if _, err := h.Srv.RemoveEntryPoint("nowhere", time.Second); err == nil || !strings.Contains(err.Error(), "entrypoint nowhere: not served") {
		t.Errorf("removing an unknown entrypoint: %v", err)
	}
}

// A request still running when the grace period ends is cut, and the drain
// ends then; a WebSocket (upgraded) is cut too.
func TestRemoveEntryPointGraceOver(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	arrived := make(chan struct{}, 1)
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	}))
	h := newHarness(t, nil, nil)
	h.EPs["dyn"] = &static.EntryPoint{Address: "127.0.0.1:0"}
	if err := h.Srv.AddEntryPoint(context.Background(), "dyn", h.EPs["dyn"]); err != nil {
		t.Fatal(err)
	}
	h.Apply(dynConfig(be.URL), generation.Options{})
	c, err := net.Dial("tcp", h.Addr("dyn"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: dyn.test\r\n\r\n")
	<-arrived
	start := time.Now()
	done, err := h.Srv.RemoveEntryPoint("dyn", 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("drain not over 10s after a 200ms grace period")
	}
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Errorf("drain over after %v, before the grace period", el)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 512)); err == nil {
		t.Errorf("connection still open after the grace period (read %d bytes)", n)
	}
}

// Shutdown waits for the drain of a removed entrypoint and its context
// cuts it; nothing is added or removed after Shutdown began.
func TestShutdownCutsRemovalDrain(t *testing.T) {
	var hits atomic.Int32
	stuck := make(chan struct{})
	defer close(stuck)
	arrived := make(chan struct{}, 1)
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		arrived <- struct{}{}
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
	}))
	h := newHarness(t, nil, nil)
	h.EPs["dyn"] = &static.EntryPoint{Address: "127.0.0.1:0"}
	if err := h.Srv.AddEntryPoint(context.Background(), "dyn", h.EPs["dyn"]); err != nil {
		t.Fatal(err)
	}
	h.Apply(dynConfig(be.URL), generation.Options{})
	c, err := net.Dial("tcp", h.Addr("dyn"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: dyn.test\r\n\r\n")
	<-arrived
	done, err := h.Srv.RemoveEntryPoint("dyn", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := h.Srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown with a drain of an hour: %v, want its context's deadline", err)
	}
	select {
	case <-done:
	default:
		t.Error("Shutdown returned before the removed entrypoint's drain ended")
	}
	if err := h.Srv.AddEntryPoint(context.Background(), "late", &static.EntryPoint{Address: "127.0.0.1:0"}); err == nil || !strings.Contains(err.Error(), "server shut down") {
		t.Errorf("AddEntryPoint after Shutdown: %v", err)
	}
	if _, err := h.Srv.RemoveEntryPoint("web", time.Second); err == nil || !strings.Contains(err.Error(), "server shut down") {
		t.Errorf("RemoveEntryPoint after Shutdown: %v", err)
	}
	if hits.Load() != 1 {
		t.Errorf("backend hits: %d, want 1", hits.Load())
	}
}

// Before Start, AddEntryPoint only registers (Start binds it) and
// RemoveEntryPoint unregisters.
func TestAddRemoveBeforeStart(t *testing.T) {
	srv, err := NewServer(dptest.Logger(t), router.NewActive(), map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddEntryPoint(context.Background(), "a", &static.EntryPoint{Address: "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddEntryPoint(context.Background(), "b", &static.EntryPoint{Address: "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	if srv.Addrs("a") == nil || len(srv.Addrs("a")) != 0 {
		t.Errorf("Addrs(a) before Start: %v, want empty", srv.Addrs("a"))
	}
	done, err := srv.RemoveEntryPoint("b", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(srv.Addrs("a")) == 0 || refused(srv.Addrs("a")[0].String()) {
		t.Errorf("entrypoint a added before Start is not listening")
	}
	if got := srv.EntryPoints(); !slices.Equal(got, []string{"a", "web"}) {
		t.Errorf("EntryPoints() = %v, want [a web]", got)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// HTTP/3 on an added entrypoint: its UDP socket is bound on the same port
// and serves the routes naming it; removed, the UDP port is free once the
// drain is over.
func TestAddEntryPointHTTP3(t *testing.T) {
	be := dptest.EchoBackend(t, "s")
	cert, key := selfSigned(t, "a.test")
	h := newHarness(t, nil, nil)
	h.EPs["dyn3"] = &static.EntryPoint{Address: "127.0.0.1:0", HTTP3: &static.EntryHTTP3{}}
	if err := h.Srv.AddEntryPoint(context.Background(), "dyn3", h.EPs["dyn3"]); err != nil {
		t.Fatal(err)
	}
	h.Apply(fmt.Sprintf(`
http:
  routers: {a@file: {rule: "Host(`+"`a.test`"+`)", service: s@file, entryPoints: [dyn3], tls: {}}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
tls:
  certificates: [{certFile: %s, keyFile: %s}]
`, be.URL, yamlQuote(cert), yamlQuote(key)), generation.Options{})
	addr := h.Addr("dyn3")
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: "a.test"}} //nolint:gosec // test
	c := &http.Client{Transport: hostRewriter{rt: tr, addr: addr}, Timeout: 5 * time.Second}
	resp, err := c.Get("https://a.test/")
	if err != nil {
		t.Fatalf("HTTP/3 on the added entrypoint: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 3 {
		t.Errorf("got %d over %s, want 200 over HTTP/3", resp.StatusCode, resp.Proto)
	}
	tr.Close()
	done, err := h.Srv.RemoveEntryPoint("dyn3", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("UDP port %s still bound after the drain: %v", addr, err)
	}
	pc.Close()
}
