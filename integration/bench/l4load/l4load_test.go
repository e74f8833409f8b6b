package main

// The load client's own accounting, against in-process servers that
// misbehave in known ways: the figures run.sh reports (units, errors, lost,
// foreign) must count what happened. A few seconds in all.

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// shortServer answers each connection with a reply of size bytes after
// the request line, then closes; it counts the connections it accepted.
func shortServer(t *testing.T, size int) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	reply := append(bytes.Repeat([]byte("r"), size-1), '\n')
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			wg.Go(func() {
				defer c.Close()
				buf := make([]byte, 4096)
				got := 0
				for !bytes.Contains(buf[:got], []byte{'\n'}) {
					k, err := c.Read(buf[got:])
					got += k
					if err != nil {
						return
					}
				}
				_, _ = c.Write(reply)
			})
		}
	})
	return l.Addr().String(), &accepted
}

func TestTCPConnOpensANewConnectionPerUnit(t *testing.T) {
	for _, engine := range []string{"epoll", "go"} {
		t.Run(engine, func(t *testing.T) {
			addr, accepted := shortServer(t, 256)
			cfg := &config{addr: addr, req: 64, resp: 256, timeout: time.Second}
			r, err := run(cfg, options{mode: "tcpconn", engine: engine, conc: 8, dur: 30 * time.Second, n: 300})
			if err != nil {
				t.Fatal(err)
			}
			if r.units != 300 || r.errs != 0 || r.sent != 300 {
				t.Fatalf("got %v, want 300 units, no errors", r)
			}
			if a := accepted.Load(); a != 300 {
				t.Fatalf("the server accepted %d connections for 300 units", a)
			}
		})
	}
}

func TestTCPConnWrongReplyIsAnError(t *testing.T) {
	for _, engine := range []string{"epoll", "go"} {
		t.Run(engine, func(t *testing.T) {
			addr, _ := shortServer(t, 100) // the client expects 256 bytes
			cfg := &config{addr: addr, req: 64, resp: 256, timeout: time.Second}
			r, err := run(cfg, options{mode: "tcpconn", engine: engine, conc: 4, dur: 30 * time.Second, n: 20})
			if err != nil {
				t.Fatal(err)
			}
			if r.units != 0 || r.errs != 20 {
				t.Fatalf("got %v, want 0 units and 20 errors", r)
			}
		})
	}
}

// udpServer echoes datagrams through f, which may drop (nil) or redirect
// them: f gets the datagram and its sender and returns where to send it.
func udpServer(t *testing.T, f func(msg []byte, from net.Addr) net.Addr) string {
	t.Helper()
	u, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { u.Close(); wg.Wait() })
	wg.Go(func() {
		buf := make([]byte, 2048)
		for {
			k, from, err := u.ReadFrom(buf)
			if err != nil {
				return
			}
			if to := f(buf[:k], from); to != nil {
				_, _ = u.WriteTo(buf[:k], to)
			}
		}
	})
	return u.LocalAddr().String()
}

func TestUDPCountsLostDatagrams(t *testing.T) {
	addr := udpServer(t, func(msg []byte, from net.Addr) net.Addr {
		if binary.BigEndian.Uint64(msg)%5 == 0 { // every 5th datagram of each client
			return nil
		}
		return from
	})
	cfg := &config{addr: addr, req: 64, timeout: 50 * time.Millisecond}
	r, err := run(cfg, options{mode: "udp", conc: 4, dur: 30 * time.Second, n: 100})
	if err != nil {
		t.Fatal(err)
	}
	if r.sent != 100 || r.lost != 20 || r.units != 80 || r.errs != 0 || r.foreign != 0 {
		t.Fatalf("got %v, want 100 sent, 20 lost, 80 echoed", r)
	}
}

func TestUDPCountsRepliesToTheWrongClient(t *testing.T) {
	// Every 4th datagram of each client comes back as another client's
	// (its client id changed), as a proxy that crossed sessions would send
	// it: counted foreign, not as this client's echo, which is then lost.
	// (Crossing real senders depended on the clients' interleaving: one
	// goroutine could do all 40 units alone.)
	addr := udpServer(t, func(msg []byte, from net.Addr) net.Addr {
		if len(msg) >= 16 && binary.BigEndian.Uint64(msg)%4 == 0 {
			binary.BigEndian.PutUint64(msg[8:], binary.BigEndian.Uint64(msg[8:])^1<<63)
		}
		return from
	})
	cfg := &config{addr: addr, req: 64, timeout: 50 * time.Millisecond}
	r, err := run(cfg, options{mode: "udp", conc: 4, dur: 30 * time.Second, n: 40})
	if err != nil {
		t.Fatal(err)
	}
	if r.foreign == 0 || r.foreign != r.lost || r.errs != 0 || r.units+r.lost != r.sent {
		t.Fatalf("got %v, want each foreign reply counted and its datagram lost, every datagram echoed or lost", r)
	}
}

func TestBulkCountsTheEcho(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	var cut atomic.Bool
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				if cut.Load() { // echo 100 KB, end the echo, read the rest: every write succeeds
					_, _ = io.CopyN(c, c, 100_000)
					_ = c.(*net.TCPConn).CloseWrite()
					_, _ = io.Copy(io.Discard, c)
					return
				}
				_, _ = io.Copy(c, c)
				_ = c.(*net.TCPConn).CloseWrite()
			})
		}
	})
	r := bulk(l.Addr().String(), 1, 30*time.Second, 4, 64<<10)
	if r.units < 4 || r.errs != 0 {
		t.Fatalf("got %v, want at least 4 MB echoed, no errors", r)
	}
	cut.Store(true)
	if r := bulk(l.Addr().String(), 1, 30*time.Second, 4, 64<<10); r.errs == 0 {
		t.Fatalf("got %v: an echo cut short must be an error", r)
	}
}
