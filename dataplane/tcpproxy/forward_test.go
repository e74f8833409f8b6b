package tcpproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/router/routestats"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// forwardPair runs Forward between a client connection and a server
// connection over loopback (termination delay 5s) and returns the two
// outer ends.
func forwardPair(t *testing.T, st *routestats.Counters) (client, server *net.TCPConn, done <-chan struct{}) {
	t.Helper()
	return forwardPairDelay(t, st, 5*time.Second)
}

// forwardPairDelay is forwardPair with termination delay delay.
func forwardPairDelay(t *testing.T, st *routestats.Counters, delay time.Duration) (client, server *net.TCPConn, done <-chan struct{}) {
	t.Helper()
	return forwardPairWith(t, st, delay, dialServer)
}

// dialServer dials Forward's server side as a load balancer does
// (dialSocket: a raw socket for an IP address).
func dialServer(addr string) (net.Conn, error) {
	return dialSocket(context.Background(), addr, 5*time.Second, net.KeepAliveConfig{})
}

// dialNetServer dials Forward's server side with net.Dialer (a server
// named by a host name).
func dialNetServer(addr string) (net.Conn, error) {
	return dialNet(context.Background(), addr, 5*time.Second, net.KeepAliveConfig{})
}

// forwardPairWith is forwardPairDelay with the server side dialled by dial.
func forwardPairWith(t *testing.T, st *routestats.Counters, delay time.Duration, dial func(string) (net.Conn, error)) (client, server *net.TCPConn, done <-chan struct{}) {
	t.Helper()
	back, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { back.Close() })
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close() })
	fwd := make(chan struct{})
	go func() {
		defer close(fwd)
		c, err := front.Accept()
		if err != nil {
			return
		}
		up, err := dial(back.Addr().String())
		if err != nil {
			c.Close()
			return
		}
		Forward(&tcpmux.Conn{Conn: c, Client: netip.MustParseAddrPort(c.RemoteAddr().String()), Stats: st}, up, delay, nil)
	}()
	cc, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := back.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close(); sc.Close(); <-fwd })
	return cc.(*net.TCPConn), sc.(*net.TCPConn), fwd
}

// TestForwardHalfClose: the client's half-close reaches the server as
// EOF while the server can still answer; the answer and then EOF reach
// the client; the router's counters hold both directions' bytes. The
// server side is a raw socket (an IP address) or a *net.TCPConn (a name).
func TestForwardHalfClose(t *testing.T) {
	for _, c := range []struct {
		name string
		dial func(string) (net.Conn, error)
	}{{"raw", dialServer}, {"net", dialNetServer}} {
		for _, size := range []int{64, smallCopy, 3 << 20} { // below, at and far past the small buffer
			t.Run(fmt.Sprintf("%s-%d", c.name, size), func(t *testing.T) {
				testForwardHalfClose(t, c.dial, size)
			})
		}
	}
}

func testForwardHalfClose(t *testing.T, dial func(string) (net.Conn, error), size int) {
	st := &routestats.Counters{}
	client, server, done := forwardPairWith(t, st, 5*time.Second, dial)
	req := make([]byte, size)
	rand.Read(req)
	go func() {
		client.Write(req)
		client.CloseWrite()
	}()
	got, err := io.ReadAll(server)
	if err != nil || !bytes.Equal(got, req) {
		t.Fatalf("server read %d bytes (err %v), want the %d sent and EOF", len(got), err, size)
	}
	resp := bytes.Repeat([]byte("r"), 2*size+1)
	go func() {
		server.Write(resp)
		server.CloseWrite()
	}()
	got, err = io.ReadAll(client)
	if err != nil || !bytes.Equal(got, resp) {
		t.Fatalf("client read %d bytes (err %v) after its half-close, want %d and EOF", len(got), err, len(resp))
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Forward did not return after both directions ended")
	}
	if s := st.Stats(); s.BytesIn != uint64(size) || s.BytesOut != uint64(len(resp)) {
		t.Fatalf("counted in %d out %d, want %d and %d", s.BytesIn, s.BytesOut, size, len(resp))
	}
}

// TestForwardManySmallReads: a conversation of more small messages than
// smallReads goes on unchanged once the copy has switched to splicing.
func TestForwardManySmallReads(t *testing.T) {
	st := &routestats.Counters{}
	client, server, _ := forwardPair(t, st)
	buf := make([]byte, 100)
	for i := range 3 * smallReads {
		msg := bytes.Repeat([]byte{byte('a' + i%26)}, 10+i)
		if _, err := client.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(server, buf[:len(msg)]); err != nil || !bytes.Equal(buf[:len(msg)], msg) {
			t.Fatalf("message %d: server got %q (err %v), want %q", i, buf[:len(msg)], err, msg)
		}
		if _, err := server.Write(msg[:5]); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(client, buf[:5]); err != nil || !bytes.Equal(buf[:5], msg[:5]) {
			t.Fatalf("reply %d: client got %q (err %v)", i, buf[:5], err)
		}
	}
}

// TestForwardTerminationDelay: once one peer closed its write side, the
// other direction gets the termination delay to finish; a peer that then
// keeps its side open and silent has its connection closed (Forward
// returns) whichever side ended first.
func TestForwardTerminationDelay(t *testing.T) {
	for _, first := range []string{"server", "client"} {
		t.Run(first, func(t *testing.T) {
			client, server, done := forwardPairDelay(t, nil, 100*time.Millisecond)
			ender, silent := server, client
			if first == "client" {
				ender, silent = client, server
			}
			if err := ender.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("the %s half-closed and the other peer stayed open and silent: Forward still running 10s later (termination delay 100ms)", first)
			}
			_ = silent.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadAll(silent); err != nil {
				t.Fatalf("the silent peer's connection: %v, want EOF once Forward closed it", err)
			}
		})
	}
}
