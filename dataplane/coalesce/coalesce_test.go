package coalesce

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// gateConn is a net.Conn whose Writes are recorded and, while gate is
// set, wait in turn for a value on it; entered gets a value as each Write
// starts.
type gateConn struct {
	net.Conn
	entered chan struct{}
	gate    chan error

	mu     sync.Mutex
	writes [][]byte
	closed bool
}

func newGateConn() *gateConn {
	return &gateConn{entered: make(chan struct{}, 16), gate: make(chan error)}
}

func (c *gateConn) Write(b []byte) (int, error) {
	c.entered <- struct{}{}
	if err := <-c.gate; err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, bytes.Clone(b))
	return len(b), nil
}

func (c *gateConn) SetWriteDeadline(time.Time) error { return nil }

func (c *gateConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func (c *gateConn) state() ([][]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes, c.closed
}

// What the server writes while the socket write of earlier bytes is in
// progress leaves in one write, in order; Close writes what is pending
// before it closes the socket.
func TestCoalescerGathersWritesWhileOneIsInProgress(t *testing.T) {
	gc := newGateConn()
	w := New(gc)
	done := make(chan struct{})
	go func() { defer close(done); w.Run() }()

	mustWrite(t, w, "first")
	<-gc.entered // the writer took "first" and is in the socket write
	for _, s := range []string{"second ", "third ", "fourth"} {
		mustWrite(t, w, s)
	}
	gc.gate <- nil // "first" written
	<-gc.entered   // the writer took what gathered meanwhile
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, closed := gc.state(); closed {
		t.Fatal("the socket closed before its pending bytes were written")
	}
	gc.gate <- nil
	<-done
	writes, closed := gc.state()
	if got := fmt.Sprintf("%q", writes); got != `["first" "second third fourth"]` {
		t.Errorf("socket writes = %s, want the three later writes in one", got)
	}
	if !closed {
		t.Error("the socket is not closed after Close")
	}
	if _, err := w.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after Close: %v, want net.ErrClosed", err)
	}
}

// A failed socket write fails every later Write, closes the socket, and a
// Write waiting for room (MaxPending pending) returns instead of hanging.
func TestCoalescerWriteErrorFailsLaterWrites(t *testing.T) {
	gc := newGateConn()
	w := New(gc)
	done := make(chan struct{})
	go func() { defer close(done); w.Run() }()

	mustWrite(t, w, "a")
	<-gc.entered
	mustWrite(t, w, string(make([]byte, MaxPending))) // pending is full now
	blocked := make(chan error, 1)
	go func() { _, err := w.Write([]byte("b")); blocked <- err }()
	broken := errors.New("connection reset")
	gc.gate <- broken
	<-done
	if err := <-blocked; !errors.Is(err, broken) {
		t.Errorf("the Write waiting for room returned %v, want the socket's error", err)
	}
	if _, err := w.Write([]byte("c")); !errors.Is(err, broken) {
		t.Errorf("Write after the failure: %v, want the socket's error", err)
	}
	if _, closed := gc.state(); !closed {
		t.Error("the socket is not closed after its write failed")
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close after the writer ended: %v", err)
	}
}

// Through a real socket (a Conn), every byte arrives in order and the peer
// sees the end of the stream after Close.
func TestCoalescerDeliversEverythingInOrder(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cc := NewConn(c)
	done := make(chan struct{})
	go func() { defer close(done); cc.Run() }()
	var want bytes.Buffer
	for i := range 5000 {
		s := fmt.Sprintf("frame %d %s\n", i, bytes.Repeat([]byte{'x'}, i%300))
		want.WriteString(s)
		if n, err := cc.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write(%d bytes) = %d, %v", len(s), n, err)
		}
	}
	if err := cc.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("peer read %d bytes, want the %d written in order", len(b), want.Len())
	}
}

func mustWrite(t *testing.T, w *Writer, s string) {
	t.Helper()
	if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
		t.Fatalf("Write(%d bytes) = %d, %v", len(s), n, err)
	}
}
