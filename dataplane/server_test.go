package dataplane

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
	"github.com/gantry-proxy/gantry/router"
)

func TestNewServerValidates(t *testing.T) {
	tests := []struct {
		name string
		ep   *static.EntryPoint
		want string
	}{
		{"empty address", &static.EntryPoint{}, "entrypoint web: address is empty"},
		{"udp", &static.EntryPoint{Address: ":53/udp"}, "protocol udp is not supported"},
		{"no port", &static.EntryPoint{Address: "localhost"}, `address "localhost": want [host]:port`},
		{"bad trusted ip", &static.EntryPoint{Address: ":80", ForwardedHeaders: &static.ForwardedHeaders{TrustedIPs: []string{"10.0.0.0/33x"}}}, `forwardedHeaders.trustedIPs: "10.0.0.0/33x"`},
		{"bad redirect", &static.EntryPoint{Address: ":80", HTTP: &static.EntryHTTP{Redirections: &static.Redirections{EntryPoint: &static.RedirectEntryPoint{To: "nowhere"}}}}, `http.redirections.entryPoint: to "nowhere" is neither an entrypoint nor a port`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewServer(slog.New(slog.DiscardHandler), router.NewActive(), map[string]*static.EntryPoint{"web": tt.ep}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// One SO_REUSEPORT listener per GOMAXPROCS on Linux, all on one port; a
// port already taken fails Start with the entrypoint and address named.
func TestListenersPerCoreAndBindError(t *testing.T) {
	h := newHarness(t, nil, nil)
	addrs := h.Srv.Addrs("web")
	if runtime.GOOS == "linux" && len(addrs) != runtime.GOMAXPROCS(0) {
		t.Errorf("got %d listeners, want GOMAXPROCS=%d", len(addrs), runtime.GOMAXPROCS(0))
	}
	for _, a := range addrs {
		if a.String() != addrs[0].String() {
			t.Errorf("listeners on different addresses: %v", addrs)
		}
	}
	// A plain (non-reuseport) listener makes the port unavailable.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s2, err := NewServer(slog.New(slog.DiscardHandler), router.NewActive(), map[string]*static.EntryPoint{"busy": {Address: l.Addr().String()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s2.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "entrypoint busy: listen on "+l.Addr().String()) {
		t.Errorf("Start on a busy port: %v, want an error naming entrypoint busy and its address", err)
	}
	if err := s2.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown after a failed Start: %v", err)
	}
}

func TestEntryPointRedirection(t *testing.T) {
	perm := false
	eps := map[string]*static.EntryPoint{
		"web":       {Address: "127.0.0.1:0", HTTP: &static.EntryHTTP{Redirections: &static.Redirections{EntryPoint: &static.RedirectEntryPoint{To: "websecure"}}}},
		"websecure": {Address: "127.0.0.1:443"},
		"tmp":       {Address: "127.0.0.1:0", HTTP: &static.EntryHTTP{Redirections: &static.Redirections{EntryPoint: &static.RedirectEntryPoint{To: "8443", Permanent: &perm}}}},
	}
	ep, err := newRedirect(eps["web"].HTTP.Redirections.EntryPoint, eps)
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := newRedirect(eps["tmp"].HTTP.Redirections.EntryPoint, eps)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rd           *redirect
		method, host string
		code         int
		loc          string
	}{
		{ep, "GET", "shop.example.com", 301, "https://shop.example.com/a?b=c"},
		{ep, "POST", "shop.example.com:80", 308, "https://shop.example.com/a?b=c"},
		{tmp, "GET", "shop.example.com", 302, "https://shop.example.com:8443/a?b=c"},
		{tmp, "PUT", "[::1]:80", 307, "https://[::1]:8443/a?b=c"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, "http://"+tt.host+"/a?b=c", nil)
		req.Host = tt.host
		w := &headerRecorder{h: http.Header{}}
		tt.rd.ServeHTTP(w, req)
		if w.code != tt.code || w.h.Get("Location") != tt.loc {
			t.Errorf("%s %s: got %d %q, want %d %q", tt.method, tt.host, w.code, w.h.Get("Location"), tt.code, tt.loc)
		}
	}
}

type headerRecorder struct {
	h    http.Header
	code int
}

func (r *headerRecorder) Header() http.Header         { return r.h }
func (r *headerRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *headerRecorder) WriteHeader(c int)           { r.code = c }

// Graceful shutdown: requests in flight when Shutdown starts finish with
// 200, new connections are refused, and Shutdown returns nil within
// graceTimeOut.
func TestGracefulShutdown(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 10)
	be := dptest.HTTPBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		fmt.Fprint(w, "done")
	}))
	grace := config.Duration(10 * time.Second)
	eps := map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0", Transport: &static.EntryTransport{LifeCycle: &static.LifeCycle{GraceTimeOut: grace}}}}
	log := slog.New(slog.DiscardHandler)
	pool := generation.NewPool(log, generation.PoolOptions{})
	defer pool.Close()
	active := router.NewActive()
	srv, err := NewServer(log, active, eps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, _ := decodeYAML(t, fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL))
	g := generation.New(pool, m, generation.Options{})
	defer g.Close()
	active.Swap(router.Compile(context.Background(), m, g, router.Options{EntryPoints: []router.EntryPoint{{Name: "web"}}}))
	addr := srv.Addrs("web")[0].String()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	const n = 5
	results := make(chan string, n)
	for range n {
		go func() {
			resp, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/")
			if err != nil {
				results <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			results <- fmt.Sprint(resp.StatusCode, " ", string(b))
		}()
	}
	for range n {
		<-arrived
	}
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	dptest.Eventually(t, "listeners to close", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(release)
	for range n {
		if r := <-results; r != "200 done" {
			t.Errorf("in-flight request: got %q, want 200 done", r)
		}
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// A WebSocket open at shutdown is given graceTimeOut, then closed.
func TestShutdownClosesUpgradedAfterGrace(t *testing.T) {
	be := newRawWSBackend(t)
	grace := config.Duration(300 * time.Millisecond)
	eps := map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0", Transport: &static.EntryTransport{LifeCycle: &static.LifeCycle{GraceTimeOut: grace}}}}
	log := slog.New(slog.DiscardHandler)
	pool := generation.NewPool(log, generation.PoolOptions{})
	defer pool.Close()
	active := router.NewActive()
	srv, _ := NewServer(log, active, eps, nil)
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, _ := decodeYAML(t, fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: "http://%s"}]}}}
`, be.l.Addr()))
	g := generation.New(pool, m, generation.Options{})
	defer g.Close()
	active.Swap(router.Compile(context.Background(), m, g, router.Options{EntryPoints: []router.EntryPoint{{Name: "web"}}}))
	c, err := net.Dial("tcp", srv.Addrs("web")[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	buf := make([]byte, 1024)
	if n, err := c.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 101") {
		t.Fatalf("handshake: %q %v", buf[:n], err)
	}
	start := time.Now()
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Errorf("Shutdown returned after %v, before the grace period, with a WebSocket open", time.Since(start))
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(buf); err == nil {
		t.Error("WebSocket still open after the grace period")
	}
}

// transport.keepAliveMaxRequests closes a connection after N requests.
func TestKeepAliveMaxRequests(t *testing.T) {
	be := dptest.EchoBackend(t, "b")
	h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0", Transport: &static.EntryTransport{KeepAliveMaxRequests: 2}}}, nil)
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
	c, err := net.Dial("tcp", h.Addr("web"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	var closes []bool
	for range 2 {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		closes = append(closes, resp.Close)
	}
	if !slices.Equal(closes, []bool{false, true}) {
		t.Errorf("Connection: close per response = %v, want [false true]", closes)
	}
}

// Sticky cookie: the first answer sets the cookie; requests carrying it
// stay on that server.
func TestStickyCookie(t *testing.T) {
	a, b := dptest.EchoBackend(t, "a"), dptest.EchoBackend(t, "b")
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {sticky: {cookie: {name: lb, httpOnly: true}}, servers: [{url: %q}, {url: %q}]}}}
`, a.URL, b.URL), generation.Options{})
	resp, err := dptest.Client.Get("http://" + h.Addr("web") + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	first := dptest.EchoHeader(string(body), "Name")
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "lb" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly {
		t.Fatalf("no httpOnly cookie lb in %v", resp.Header["Set-Cookie"])
	}
	for range 6 {
		req, _ := http.NewRequest(http.MethodGet, "http://"+h.Addr("web")+"/", nil)
		req.AddCookie(cookie)
		resp, err := dptest.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := dptest.EchoHeader(string(body), "Name"); got != first {
			t.Fatalf("sticky request went to %s, want %s", got, first)
		}
	}
}

// A second Server on the port of a running one fails Start: SO_REUSEPORT
// must not let two instances share a port silently.
func TestSecondServerOnSamePortFails(t *testing.T) {
	h := newHarness(t, nil, nil)
	addr := h.Addr("web")
	s2, err := NewServer(slog.New(slog.DiscardHandler), router.NewActive(), map[string]*static.EntryPoint{"web": {Address: addr}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("second Start on %s: %v, want address already in use", addr, err)
		s2.Shutdown(context.Background())
	}
}

// weighted.sticky.cookie pins a client to one child service.
func TestWeightedStickyCookie(t *testing.T) {
	a, b := dptest.EchoBackend(t, "a"), dptest.EchoBackend(t, "b")
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	h.Apply(fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: w@file}}
  services:
    a@file: {loadBalancer: {servers: [{url: %q}]}}
    b@file: {loadBalancer: {servers: [{url: %q}]}}
    w@file: {weighted: {sticky: {cookie: {}}, services: [{name: a@file}, {name: b@file}]}}
`, a.URL, b.URL), generation.Options{})
	seen := map[string]bool{}
	for range 4 {
		resp, err := dptest.Client.Get("http://" + h.Addr("web") + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		name := dptest.EchoHeader(string(body), "Name")
		seen[name] = true
		cookies := resp.Cookies()
		if len(cookies) != 1 {
			t.Fatalf("cookies %v, want one", resp.Header["Set-Cookie"])
		}
		for range 3 {
			req, _ := http.NewRequest(http.MethodGet, "http://"+h.Addr("web")+"/", nil)
			req.AddCookie(cookies[0])
			resp, err := dptest.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := dptest.EchoHeader(string(body), "Name"); got != name {
				t.Fatalf("cookie for %s led to %s", name, got)
			}
		}
	}
	if !seen["a"] || !seen["b"] {
		t.Errorf("new clients went to %v, want both children", seen)
	}
}

// Slowloris (reliability.md §3.2, F5): a client that never finishes its
// headers, or never sends a byte, is cut at readHeaderTimeout.
func TestReadHeaderTimeout(t *testing.T) {
	rht := config.Duration(200 * time.Millisecond)
	h := newHarness(t, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0",
		Transport: &static.EntryTransport{RespondingTimeouts: &static.RespondingTimeouts{ReadHeaderTimeout: &rht}}}}, nil)
	h.Apply(`http: {}`, generation.Options{})
	for _, partial := range []string{"", "GET / HTTP/1.1\r\nHost: a\r\nX-Slow: "} {
		c, err := net.Dial("tcp", h.Addr("web"))
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, partial)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		start := time.Now()
		_, err = io.ReadAll(c)
		c.Close()
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("partial %q: connection still open after 10s", partial)
		}
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Errorf("partial %q: closed after %v, before the header timeout", partial, d)
		}
	}
}

// A connection that sent nothing does not hold Shutdown for the header
// timeout or the grace period: it is cut at once. Both are an hour here, so
// Shutdown returning at all (within a generous minute) is the proof.
func TestShutdownCutsSilentConnections(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	hour := config.Duration(time.Hour)
	srv, err := NewServer(log, router.NewActive(), map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0",
		Transport: &static.EntryTransport{LifeCycle: &static.LifeCycle{GraceTimeOut: hour},
			RespondingTimeouts: &static.RespondingTimeouts{ReadHeaderTimeout: &hour}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", srv.Addrs("web")[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ep := srv.eps["web"]
	dptest.Eventually(t, "the connection to be accepted", func() bool { return ep.sniffers.Load() == 1 })
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Shutdown still waiting a minute into an hour's grace with one silent connection")
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("silent connection still open after Shutdown")
	}
}

// lifeCycle.requestAcceptGraceTimeout: after Shutdown starts, new requests
// are still accepted and served for that long (for load balancers in front
// to notice), then the entrypoint stops.
func TestRequestAcceptGraceTimeout(t *testing.T) {
	be := dptest.EchoBackend(t, "b")
	lc := &static.LifeCycle{RequestAcceptGraceTimeout: config.Duration(time.Hour)}
	log := slog.New(slog.DiscardHandler)
	pool := generation.NewPool(log, generation.PoolOptions{})
	defer pool.Close()
	active := router.NewActive()
	srv, err := NewServer(log, active, map[string]*static.EntryPoint{"web": {Address: "127.0.0.1:0", Transport: &static.EntryTransport{LifeCycle: lc}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, _ := decodeYAML(t, fmt.Sprintf(`
http:
  routers: {r@file: {rule: "PathPrefix(`+"`/`"+`)", service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL))
	g := generation.New(pool, m, generation.Options{})
	defer g.Close()
	active.Swap(router.Compile(context.Background(), m, g, router.Options{EntryPoints: []router.EntryPoint{{Name: "web"}}}))
	addr := srv.Addrs("web")[0].String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	tr := &http.Transport{DisableKeepAlives: true}
	for i := range 3 {
		resp, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/")
		if err != nil {
			t.Fatalf("request %d during the accept grace period: %v", i, err)
		}
		resp.Body.Close()
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned during the accept grace period: %v", err)
	default:
	}
	cancel() // the caller's deadline ends the grace period early
	if err := <-done; err != context.Canceled {
		t.Errorf("Shutdown = %v, want context.Canceled", err)
	}
}

// The redirection is a router of the table: with its default priority it
// wins over every user router; with priority 1 a user router above it is
// served, and the redirect still covers the rest. Requests without a Host
// match no rule (Traefik's HostRegexp(`^.+$`)).
func TestRedirectionPriority(t *testing.T) {
	be := dptest.EchoBackend(t, "app")
	for _, tt := range []struct {
		prio     int
		wantCode int
	}{{0, http.StatusMovedPermanently}, {1, http.StatusOK}} {
		eps := map[string]*static.EntryPoint{
			"web":       {Address: "127.0.0.1:0", HTTP: &static.EntryHTTP{Redirections: &static.Redirections{EntryPoint: &static.RedirectEntryPoint{To: "websecure", Priority: tt.prio}}}},
			"websecure": {Address: "127.0.0.1:0"},
		}
		h := newHarness(t, eps, nil)
		tbl := h.Apply(fmt.Sprintf(`
http:
  routers: {api@file: {rule: "Host(`+"`shop.example.com`"+`) && PathPrefix(`+"`/.well-known/`"+`)", priority: 100, entryPoints: [web], service: s@file}}
  services: {s@file: {loadBalancer: {servers: [{url: %q}]}}}
`, be.URL), generation.Options{})
		if st := tbl.Report().Routers["web-to-websecure@internal"]; st == nil || st.Status != "enabled" {
			t.Fatalf("redirect router in the report: %+v", st)
		}
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		send := func(path string) *http.Response {
			req, _ := http.NewRequest(http.MethodGet, "http://"+h.Addr("web")+path, nil)
			req.Host = "shop.example.com"
			resp, err := noFollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		if code := send("/.well-known/x").StatusCode; code != tt.wantCode {
			t.Errorf("priority %d: user router at 100 answered %d, want %d", tt.prio, code, tt.wantCode)
		}
		resp := send("/other")
		if resp.StatusCode != http.StatusMovedPermanently || !strings.HasPrefix(resp.Header.Get("Location"), "https://shop.example.com:") {
			t.Errorf("priority %d: other path %d %q, want a 301 to websecure", tt.prio, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}
