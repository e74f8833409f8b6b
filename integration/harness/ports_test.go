package harness

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortsLieBelowTheEphemeralRange: every port handed out is below
// the range outgoing connections take theirs from, distinct, and
// bindable by the caller.
func TestFreePortsLieBelowTheEphemeralRange(t *testing.T) {
	top := ephemeralStart()
	seen := map[int]bool{}
	for range 200 {
		p := FreePort(t)
		if p < lowestPort || p >= top {
			t.Fatalf("port %d outside %d-%d", p, lowestPort, top-1)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	p := FreeDNSPort(t)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatal(err)
	}
	u.Close()
}

// TestFreePortSkipsABoundPort: a port something listens on is not handed
// out (the probe binds it first).
func TestFreePortSkipsABoundPort(t *testing.T) {
	if bindable(func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l.Addr().(*net.TCPAddr).Port
	}(), false) {
		t.Fatal("a port with a listener counted as bindable")
	}
}
