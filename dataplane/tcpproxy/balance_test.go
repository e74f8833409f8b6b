package tcpproxy

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// A load balancer reaches a server addressed by IP literal and one
// addressed by host name the same way, and goes on to the next server
// when a dial fails.
func TestLoadBalancerDialsLiteralAndName(t *testing.T) {
	back, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	go func() {
		for {
			c, err := back.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 5)
				if _, err := io.ReadFull(c, b); err == nil {
					_, _ = c.Write(append([]byte("echo "), b...))
				}
			}()
		}
	}()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close() // refuses connections
	port := back.Addr().(*net.TCPAddr).Port
	for _, live := range []string{back.Addr().String(), net.JoinHostPort("localhost", strconv.Itoa(port))} {
		t.Run(live, func(t *testing.T) {
			servers := []*Server{NewServer(deadAddr, false, 1), NewServer(live, false, 1)}
			lb := NewLoadBalancer(context.Background(), "svc", servers, DefaultTransport(), slog.New(slog.DiscardHandler))
			for range 2 { // each server picked first once
				front, client := net.Pipe()
				done := make(chan struct{})
				go func() {
					defer close(done)
					lb.ServeTCP(&tcpmux.Conn{Conn: front, Client: netip.MustParseAddrPort("192.0.2.1:1234")})
				}()
				_ = client.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := client.Write([]byte("hello")); err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(client)
				if err != nil || string(got) != "echo hello" {
					t.Fatalf("through the load balancer: %q, %v; want %q", got, err, "echo hello")
				}
				client.Close()
				<-done
			}
		})
	}
}
