//go:build linux

package h1

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// selfSigned returns a certificate for "h1.test".
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "h1.test"},
		DNSNames: []string{"h1.test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// parkedCount is how many connections s's parker holds.
func parkedCount(s *Server) int {
	p, err := s.getParker() // synchronized with the first park by parkOnce
	if err != nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, cs := range p.conns {
		if cs != nil {
			n++
		}
	}
	return n
}

// An idle TLS keep-alive connection is parked like a plain one (no
// goroutine, no read buffer), resumes when its next request arrives —
// including one written before the park completed — and is closed at its
// idle timeout while parked.
func TestTLSConnectionParks(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }),
		ReadHeaderTimeout: 2 * time.Second, IdleTimeout: 1500 * time.Millisecond}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				tc := tls.Server(c, conf)
				if tc.Handshake() != nil {
					tc.Close()
					return
				}
				s.ServeConn(tc, time.Time{})
			})
		}
	})
	t.Cleanup(func() { ln.Close(); s.CloseIdle(); wg.Wait() })

	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test certificate
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for _, path := range []string{"/1", "/2", "/3"} {
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := readResp(t, br, "GET"); body != path {
			t.Fatalf("%s: body %q", path, body)
		}
		time.Sleep(idleHandoff + 200*time.Millisecond)
		if n := parkedCount(s); n != 1 {
			t.Fatalf("after %s: %d connections parked, want the TLS one", path, n)
		}
	}
	start := time.Now()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("want EOF at the idle timeout, got %v", err)
	}
	if d := time.Since(start); d < time.Second {
		t.Fatalf("closed after %v, before the 1.5 s idle timeout", d)
	}
}

// A parked socket closed behind the parker's back frees its descriptor,
// and the next accepted connection may get the same number and park on
// it. The old connection's expiry must then close only the old one: the
// new connection's epoll registration stays, and its next request is
// served. (Before generations, expire deleted the registration by bare
// descriptor, and the new connection was never woken again.)
func TestParkedDescriptorReuse(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }),
		ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); s.CloseIdle(); wg.Wait() })
	// The test accepts, so that no connection takes a descriptor between
	// the close of A and the accept of B.
	accept := func() {
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { s.ServeConn(c, time.Time{}) })
	}
	// parkedOn waits until a connection other than not is parked, and
	// returns it with its descriptor.
	parkedOn := func(not *conn) (*conn, int) {
		t.Helper()
		for range 500 {
			p, err := s.getParker()
			if err == nil {
				p.mu.Lock()
				for fd, cs := range p.conns {
					if cs != nil && cs != not {
						p.mu.Unlock()
						return cs, fd
					}
				}
				p.mu.Unlock()
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("no connection parked")
		return nil, 0
	}
	get := func(c net.Conn, path string) {
		t.Helper()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := readResp(t, bufio.NewReader(c), "GET"); body != path {
			t.Fatalf("%s: body %q", path, body)
		}
	}

	ca, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close()
	accept()
	get(ca, "/a")
	a, fdA := parkedOn(nil)

	// B's client socket exists before A's server socket closes, so the
	// accept below is the first to ask for a descriptor.
	cb, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	a.c.Close() // behind the parker's back
	accept()
	get(cb, "/b1")
	b, fdB := parkedOn(a)
	if fdB != fdA {
		t.Fatalf("B parked on descriptor %d, A had %d: the reuse this test needs did not happen", fdB, fdA)
	}

	// A's idle timeout passes while B is parked.
	p, _ := s.getParker()
	p.mu.Lock()
	a.idleUntil = time.Now().Add(-time.Second)
	if a.pprev == nil && p.head != a {
		p.insert(a, true)
	}
	p.mu.Unlock()
	p.expire()
	p.mu.Lock()
	stillB := fdB < len(p.conns) && p.conns[fdB] == b
	p.mu.Unlock()
	if !stillB {
		t.Fatal("A's expiry took B off the parker")
	}
	get(cb, "/b2") // B's registration survived: the poller wakes it
}

// CloseOldestParked closes the connection parked idle the longest, only
// it, with or without an idle timeout; the others stay parked and are
// served on their next request, and Parked is called for every park.
func TestCloseOldestParked(t *testing.T) {
	for _, idle := range []time.Duration{0, time.Minute} {
		t.Run(idle.String(), func(t *testing.T) {
			var parks sync.WaitGroup
			parks.Add(3)
			s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }),
				ReadHeaderTimeout: 5 * time.Second, IdleTimeout: idle, Parked: parks.Done}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					wg.Go(func() { s.ServeConn(c, time.Time{}) })
				}
			})
			t.Cleanup(func() { ln.Close(); s.CloseIdle(); wg.Wait() })
			if s.CloseOldestParked() {
				t.Fatal("closed a connection with none parked")
			}
			var clients []net.Conn
			var readers []*bufio.Reader
			for i := range 3 {
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				io.WriteString(c, "GET /first HTTP/1.1\r\nHost: h\r\n\r\n")
				readResp(t, br, "GET")
				clients, readers = append(clients, c), append(readers, br)
				// Parked in this order: the first one goes idle first.
				deadline := time.Now().Add(10 * time.Second)
				for parkedCount(s) != i+1 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if n := parkedCount(s); n != i+1 {
					t.Fatalf("%d connections parked, want %d", n, i+1)
				}
			}
			parks.Wait()
			if _, ok := s.OldestParked(); !ok {
				t.Fatal("OldestParked found none")
			}
			if !s.CloseOldestParked() {
				t.Fatal("CloseOldestParked closed nothing")
			}
			if _, err := readers[0].ReadByte(); err != io.EOF {
				t.Fatalf("oldest connection: want EOF, got %v", err)
			}
			if n := parkedCount(s); n != 2 {
				t.Fatalf("%d connections parked after closing the oldest, want 2", n)
			}
			for i, c := range clients[1:] {
				io.WriteString(c, "GET /again HTTP/1.1\r\nHost: h\r\n\r\n")
				if _, body := readResp(t, readers[i+1], "GET"); body != "/again" {
					t.Fatalf("client %d: body %q", i+1, body)
				}
			}
		})
	}
}
