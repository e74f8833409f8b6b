package udpproxy

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// A server given by host name is resolved off the read loop: while one new
// client's session waits for a slow resolution, a client with a session
// keeps being answered; once resolved, the waiting client's first datagram
// and the one it sent meanwhile both reach the server, in order.
func TestHostNameResolvedOffTheReadLoop(t *testing.T) {
	backend := echo(t)
	_, port, _ := net.SplitHostPort(backend)
	server := "slow.invalid:" + port
	c := config.New()
	uc := c.EnsureUDP()
	uc.Routers["u@file"] = &config.UDPRouter{Service: "u@file", EntryPoints: []string{"u"}}
	uc.Services["u@file"] = &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{Servers: []config.UDPServer{{Address: server}}}}
	active := router.NewActive()
	active.Swap(router.Compile(context.Background(), &providers.Merged{Config: c}, builder{addr: server},
		router.Options{EntryPoints: []router.EntryPoint{{Name: "u", UDP: true}}}))
	s := NewServer(slog.New(slog.DiscardHandler), active, []EntryPoint{{Name: "u", Address: "127.0.0.1:0", Timeout: time.Minute}})
	// The first resolution is quick, the second waits for release.
	release := make(chan struct{})
	calls := 0
	s.eps[0].dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != server {
			return nil, fmt.Errorf("dial %s, want %s", addr, server)
		}
		calls++ // dials of the second session onwards run in their own goroutine, one at a time here
		if calls > 1 {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		var d net.Dialer
		return d.DialContext(ctx, network, backend)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	dial := func() net.Conn {
		cc, err := net.Dial("udp", s.Addr("u").String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cc.Close() })
		return cc
	}
	buf := make([]byte, 64)
	ask := func(cc net.Conn, msg string) string {
		_ = cc.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := cc.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		n, err := cc.Read(buf)
		if err != nil {
			return err.Error()
		}
		return string(buf[:n])
	}
	fast, slow := dial(), dial()
	if got := ask(fast, "one"); got != "one" {
		t.Fatalf("first client: %q", got)
	}
	for _, m := range []string{"first", "second"} {
		if _, err := slow.Write([]byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	if got := ask(fast, "two"); got != "two" {
		t.Fatalf("a client with a session was not answered while another resolved: %q", got)
	}
	close(release)
	for _, want := range []string{"first", "second"} {
		_ = slow.SetDeadline(time.Now().Add(2 * time.Second))
		n, err := slow.Read(buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("waiting client: got %q %v, want %q", buf[:n], err, want)
		}
	}
	// The reply is counted right after it is sent.
	deadline := time.Now().Add(2 * time.Second)
	st, _ := active.Stats().Get("u@file")
	for st.DatagramsOut != 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		st, _ = active.Stats().Get("u@file")
	}
	if st.Open != 2 || st.DatagramsIn != 4 || st.DatagramsOut != 4 {
		t.Errorf("stats %+v, want 2 sessions, 4 datagrams each way", st)
	}
}
