//go:build !race

// The race detector's shadow memory inflates the resident set: scripts/test.sh's
// "allocation and memory assertions" step runs this without it.

package udpproxy

import (
	"context"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// rss is the process's resident set size in bytes (/proc/self/statm).
func rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// maxSessionRSS bounds the resident memory one idle UDP session adds (its
// upstream socket's Go structures, its relay goroutine, its map entry):
// with a 64 KiB read buffer per session it was about 72 KiB.
const maxSessionRSS = 24 << 10

// Memory of idle UDP sessions: sessions sessions are opened (one client
// socket each, answered by an echo server) and the resident set grows by
// less than maxSessionRSS per session, because a relay holds no read
// buffer while it waits (datagramPool). The measured figure is logged.
func TestSessionMemory(t *testing.T) {
	const sessions = 1000
	raiseFDLimit(t) // the session cap is a quarter of the fd limit
	backend := echo(t)
	c := config.New()
	uc := c.EnsureUDP()
	uc.Routers["u@file"] = &config.UDPRouter{Service: "u@file", EntryPoints: []string{"u"}}
	uc.Services["u@file"] = &config.UDPService{LoadBalancer: &config.UDPServersLoadBalancer{Servers: []config.UDPServer{{Address: backend}}}}
	active := router.NewActive()
	active.Swap(router.Compile(context.Background(), &providers.Merged{Config: c}, builder{addr: backend},
		router.Options{EntryPoints: []router.EntryPoint{{Name: "u", UDP: true}}}))
	s := NewServer(slog.New(slog.DiscardHandler), active, []EntryPoint{{Name: "u", Address: "127.0.0.1:0", Timeout: time.Minute}})
	if s.cap.max < sessions {
		t.Fatalf("session limit %d below %d: the fd limit (ulimit -n %d after raising it to the hard limit) is too low for this test", s.cap.max, sessions, fdLimit(t))
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	addr := s.Addr("u").String()
	clients := make([]net.Conn, sessions)
	for i := range clients {
		cc, err := net.Dial("udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cc.Close() })
		clients[i] = cc
	}
	ping := func(cc net.Conn, buf []byte) {
		_ = cc.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := cc.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		if n, err := cc.Read(buf); err != nil || string(buf[:n]) != "ping" {
			t.Fatalf("echo through the session: %v %q", err, buf[:n])
		}
	}
	buf := make([]byte, 16)
	ping(clients[0], buf) // warm up: the pool, the first session
	runtime.GC()
	debug.FreeOSMemory()
	before := rss(t)
	for _, cc := range clients[1:] {
		ping(cc, buf)
	}
	runtime.GC()
	after := rss(t)
	if n := s.cap.n.Load(); n != sessions {
		t.Fatalf("%d sessions open, want %d", n, sessions)
	}
	per := (after - before) / (sessions - 1)
	t.Logf("RSS %d -> %d KiB: %d bytes per idle UDP session", before>>10, after>>10, per)
	if per > maxSessionRSS {
		t.Errorf("an idle UDP session costs %d bytes of RSS, want at most %d", per, maxSessionRSS)
	}
	st, _ := active.Stats().Get("u@file")
	if st.Open != sessions || st.DatagramsIn != sessions || st.DatagramsOut != sessions || st.BytesIn != 4*sessions || st.BytesOut != 4*sessions {
		t.Errorf("router stats %+v, want %d sessions open, one 4-byte datagram each way per session", st, sessions)
	}
}

// raiseFDLimit raises the soft fd limit to the hard one for this process,
// as a server started with a low default would be configured to.
func raiseFDLimit(t *testing.T) {
	t.Helper()
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Fatal(err)
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			t.Fatal(err)
		}
	}
}

// fdLimit is the current soft fd limit.
func fdLimit(t *testing.T) uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Fatal(err)
	}
	return l.Cur
}
