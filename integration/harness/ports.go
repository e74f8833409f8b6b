package harness

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Ports for servers the tests start (Gantry's entrypoints, Consul, etcd,
// Pebble) come from below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range, 32768-60999 by default). A port found
// with Listen("127.0.0.1:0") lies inside it, where every outgoing
// connection of every process on the machine also takes its local port:
// between the probe and the server's own bind, a client connection of
// another test package running at the same time could take it, and the
// server failed with "bind: address already in use" (seen: a Consul
// agent in CI). Below the range only another test's chosen port can
// collide: the choice is random over about 22 000 ports, each probed
// free, and never handed out twice by one process.
const lowestPort = 10000

var ports struct {
	once   sync.Once
	top    int // first port of the ephemeral range
	mu     sync.Mutex
	issued map[int]bool
}

// ephemeralStart returns the first port of the kernel's ephemeral range
// (32768 when /proc does not say).
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				return n
			}
		}
	}
	return 32768
}

// freePort returns a loopback port below the ephemeral range, not handed
// out before by this process, that TCP (and, with udp, UDP too) can bind
// right now.
func freePort(udp bool) (int, error) {
	ports.once.Do(func() { ports.top = ephemeralStart(); ports.issued = map[int]bool{} })
	if ports.top-lowestPort < 1000 {
		return 0, fmt.Errorf("the ephemeral range starts at %d: too few ports below it", ports.top)
	}
	ports.mu.Lock()
	defer ports.mu.Unlock()
	for range 1000 {
		p := lowestPort + rand.IntN(ports.top-lowestPort)
		if ports.issued[p] || !bindable(p, udp) {
			continue
		}
		ports.issued[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("no free port in %d-%d after 1000 tries", lowestPort, ports.top-1)
}

// bindable reports whether 127.0.0.1:p can be bound for TCP (and UDP).
func bindable(p int, udp bool) bool {
	addr := "127.0.0.1:" + strconv.Itoa(p)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	defer l.Close()
	if udp {
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		u.Close()
	}
	return true
}

// FreePort returns a loopback TCP port nothing listens on right now, below
// the ephemeral range (see above).
func FreePort(t testing.TB) int {
	t.Helper()
	return mustFreePort(t, false)
}

// FreeDNSPort returns a loopback port free for both TCP and UDP (the DNS
// server binds both; Pebble queries over TCP).
func FreeDNSPort(t testing.TB) int {
	t.Helper()
	return mustFreePort(t, true)
}

func mustFreePort(t testing.TB, udp bool) int {
	t.Helper()
	p, err := freePort(udp)
	if err != nil {
		t.Fatalf("harness: find a free port (UDP too: %v): %v", udp, err)
	}
	return p
}

// FreeAddr returns "127.0.0.1:port" for a FreePort.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(FreePort(t))
}
