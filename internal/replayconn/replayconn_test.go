package replayconn

import (
	"errors"
	"io"
	"net"
	"testing"
)

// TestReplaysPendingThenConnection reads through a Conn with a small
// buffer: the pending bytes come first, none are read twice or lost, and
// the connection's own bytes and EOF follow.
func TestReplaysPendingThenConnection(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		_, _ = b.Write([]byte(" world"))
		_ = b.Close()
	}()
	c := &Conn{Conn: a, Pending: []byte("hello")}
	var got []byte
	buf := make([]byte, 2)
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != "hello world" {
		t.Fatalf("read %q, want %q", got, "hello world")
	}
	if c.NetConn() != a {
		t.Fatal("NetConn is not the wrapped connection")
	}
}

// TestCloseWrite half-closes a TCP connection under Conn (the peer reads
// EOF while the other direction still works) and reports ErrNoHalfClose
// for a connection without CloseWrite.
func TestCloseWrite(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dialed, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer dialed.Close()
	peer, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	c := &Conn{Conn: dialed}
	if err := c.CloseWrite(); err != nil {
		t.Fatalf("CloseWrite over TCP: %v", err)
	}
	if n, err := peer.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("peer read after CloseWrite = %d, %v; want 0, EOF", n, err)
	}
	if _, err := peer.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(make([]byte, 1)); n != 1 || err != nil {
		t.Fatalf("read after CloseWrite = %d, %v; want 1, nil", n, err)
	}

	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if err := (&Conn{Conn: a}).CloseWrite(); !errors.Is(err, ErrNoHalfClose) {
		t.Fatalf("CloseWrite over a pipe = %v, want ErrNoHalfClose", err)
	}
}
