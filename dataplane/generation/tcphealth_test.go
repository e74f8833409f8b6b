package generation_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
)

// A TCP server found down by its health check stays out of rotation
// through a swap: the new generation's server shares the state of the
// previous one instead of counting as healthy until its own first check
// ends (here the check of the new generation hangs for its 3s timeout).
func TestTCPHealthCarriedAcrossSwap(t *testing.T) {
	var hang atomic.Bool
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if hang.Load() { // a check (or client) gets no answer
					_, _ = io.Copy(io.Discard, c)
					return
				}
				line, _ := bufio.NewReader(c).ReadString('\n')
				if line == "PING\n" {
					_, _ = io.WriteString(c, "NOPE") // the check fails: down
				}
			}()
		}
	}()
	eps := map[string]*static.EntryPoint{"raw": {Address: "127.0.0.1:0"}}
	h := newHarness(t, eps, nil)
	conf := func(n int) string {
		return fmt.Sprintf(`
# generation %d
tcp:
  routers:
    r:
      entryPoints: [raw]
      rule: HostSNI(`+"`*`"+`)
      service: s
  services:
    s:
      loadBalancer:
        servers: [{address: %q}]
        healthCheck:
          send: "PING\n"
          expect: PONG
          interval: 100ms
          timeout: 3s
`, n, l.Addr().String())
	}
	// notRouted reports whether Gantry closed the connection at once (no
	// healthy server) rather than handing it to the server, which holds it.
	notRouted := func() bool {
		c, err := net.Dial("tcp", h.Addr("raw"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		_, err = c.Read(make([]byte, 1))
		ne, ok := err.(net.Error)
		return err != nil && !(ok && ne.Timeout())
	}
	h.Apply(conf(1), generation.Options{})
	deadline := time.Now().Add(10 * time.Second)
	hang.Store(true) // client connections to the server are held from now on
	for !notRouted() {
		if time.Now().After(deadline) {
			t.Fatal("the failing server was never taken out of rotation")
		}
	}
	h.Apply(conf(2), generation.Options{})
	if !notRouted() {
		t.Fatal("after a swap the server found down counts as healthy again before its new check ends")
	}
}
