package tcpproxy

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/router/routestats"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// BenchmarkForward measures one TCP connection's throughput through
// Forward over loopback (client → Forward → sink), 1 MiB per iteration;
// between two *net.TCPConn the copy splices, also when it counts bytes
// for the router's stats (io.CopyN per 256 KiB).
func BenchmarkForward(b *testing.B) {
	b.Run("uncounted", func(b *testing.B) { benchForward(b, nil) })
	b.Run("counted", func(b *testing.B) { benchForward(b, &routestats.Counters{}) })
}

func benchForward(b *testing.B, st *routestats.Counters) {
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	done := make(chan int64, 1)
	go func() {
		c, err := sink.Accept()
		if err != nil {
			return
		}
		n, _ := io.Copy(io.Discard, c)
		c.Close()
		done <- n
	}()
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer front.Close()
	fwd := make(chan struct{})
	go func() {
		defer close(fwd)
		c, err := front.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", sink.Addr().String())
		if err != nil {
			return
		}
		Forward(&tcpmux.Conn{Conn: c, Client: netip.MustParseAddrPort(c.RemoteAddr().String()), Stats: st}, up, time.Second, nil)
	}()
	client, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for range b.N {
		if _, err := client.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	client.(*net.TCPConn).CloseWrite()
	if n := <-done; n != int64(b.N)*int64(len(buf)) {
		b.Fatalf("sink got %d bytes, want %d", n, int64(b.N)*int64(len(buf)))
	}
	b.StopTimer()
	client.Close()
	<-fwd
	if st != nil && st.Stats().BytesIn != uint64(b.N)*uint64(len(buf)) {
		b.Fatalf("counted %d bytes in, want %d", st.Stats().BytesIn, int64(b.N)*int64(len(buf)))
	}
}

// BenchmarkServeTCPShortConn measures one short connection through a
// load balancer per iteration (the integration/bench tcpconn shape: the
// client sends 64 bytes, the server answers 256 and closes): the dial,
// both directions of the copy and the termination delay's timer. The
// client side is a net.Pipe, so its cost stays small.
func BenchmarkServeTCPShortConn(b *testing.B) {
	back, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer back.Close()
	go func() {
		reply := make([]byte, 256)
		for {
			c, err := back.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var req [64]byte
				if _, err := io.ReadFull(c, req[:]); err == nil {
					_, _ = c.Write(reply)
				}
			}()
		}
	}()
	lb := NewLoadBalancer(context.Background(), "svc", []*Server{NewServer(back.Addr().String(), false, 1)}, DefaultTransport(), slog.New(slog.DiscardHandler))
	req, resp := make([]byte, 64), make([]byte, 512)
	b.ReportAllocs()
	for b.Loop() {
		front, client := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			lb.ServeTCP(&tcpmux.Conn{Conn: front, Client: netip.MustParseAddrPort("192.0.2.1:1234")})
		}()
		if _, err := client.Write(req); err != nil {
			b.Fatal(err)
		}
		n, err := io.ReadFull(client, resp[:256])
		if err != nil || n != 256 {
			b.Fatalf("read %d bytes: %v", n, err)
		}
		client.Close()
		<-done
	}
}
