package udpproxy

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/routertest"
)

// builder routes every UDP router to one fixed server address; it
// builds no TCP router.
type builder struct {
	routertest.Base
	addr string
}

func (builder) Build(context.Context, string, *config.Router) (http.Handler, error) {
	return http.NotFoundHandler(), nil
}
func (b builder) BuildUDP(context.Context, string, *config.UDPRouter) (router.UDPHandler, error) {
	return fixed(b.addr), nil
}

// fixed picks one server address.
type fixed string

func (f fixed) Pick() (string, error) { return string(f), nil }

// echo serves a loopback UDP echo server for the test's lifetime.
func echo(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, a, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(buf[:n], a)
		}
	}()
	return pc.LocalAddr().String()
}

func TestSessionLimitFromNofile(t *testing.T) {
	for _, c := range []struct {
		nofile uint64
		want   int64
	}{{0, maxSessions}, {1 << 20, maxSessions}, {20000, 5000}, {1024, 256}, {2, 1}} {
		if got := sessionLimit(c.nofile); got != c.want {
			t.Errorf("sessionLimit(%d) = %d, want %d", c.nofile, got, c.want)
		}
	}
	if s := NewServer(slog.Default(), router.NewActive(), nil); s.cap.max != sessionLimit(nofileLimit()) || s.cap.max > maxSessions {
		t.Errorf("server limit %d, want sessionLimit(RLIMIT_NOFILE) = %d", s.cap.max, sessionLimit(nofileLimit()))
	}
}

// The session bound holds across all UDP entrypoints of the process (each
// session is a socket: a flood of forged sources on several entrypoints
// must not exhaust the file descriptors), and a slot freed by an expired
// session serves a new client again.
func TestSessionLimitSharedByEntrypoints(t *testing.T) {
	backend := echo(t)
	c := config.New()
	uc := c.EnsureUDP()
	uc.Routers["a@file"] = &config.UDPRouter{Service: "u@file", EntryPoints: []string{"a"}}
	uc.Routers["b@file"] = &config.UDPRouter{Service: "u@file", EntryPoints: []string{"b"}}
	uc.Services["u@file"] = &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{Servers: []config.UDPServer{{Address: backend}}}}
	tbl := router.Compile(context.Background(), &providers.Merged{Config: c}, builder{addr: backend},
		router.Options{EntryPoints: []router.EntryPoint{{Name: "a", UDP: true}, {Name: "b", UDP: true}}})
	active := router.NewActive()
	active.Swap(tbl)
	timeout := 2 * time.Second
	s := NewServer(slog.Default(), active, []EntryPoint{{Name: "a", Address: "127.0.0.1:0", Timeout: timeout}, {Name: "b", Address: "127.0.0.1:0", Timeout: timeout}})
	s.cap.max = 3
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	ask := func(ep string) bool {
		c, err := net.Dial("udp", s.Addr(ep).String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := c.Write([]byte("ping")); err != nil {
			return false
		}
		buf := make([]byte, 16)
		n, err := c.Read(buf)
		return err == nil && string(buf[:n]) == "ping"
	}
	answered := 0
	for i, ep := range []string{"a", "b", "a", "b", "a", "b"} {
		if ask(ep) {
			answered++
		} else if i < 3 {
			t.Errorf("client %d on %s not answered below the limit", i, ep)
		}
	}
	if answered != 3 {
		t.Errorf("%d of 6 clients of two entrypoints got a session, want the limit 3", answered)
	}
	if n := s.cap.n.Load(); n != 3 {
		t.Errorf("%d sessions counted, want 3", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.cap.n.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := s.cap.n.Load(); n != 0 {
		t.Fatalf("%d sessions counted after they expired, want 0", n)
	}
	if !ask("b") {
		t.Error("a new client after the sessions expired got no session")
	}
}
