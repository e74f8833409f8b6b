package tcpudp

import (
	"fmt"
	"io"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// A splice pipe is closed with its connection, not left to the garbage
// collector: once Gantry's sockets are back to the baseline after 300
// clients reset mid-transfer (read from /proc alone, so no collection is
// provoked), its pipe ends are within the reuse pool's bound.
func TestTCPAbusePipesClosedWithConnection(t *testing.T) {
	r := startAbuse(t, abuseRoute{name: "source", server: startBackend(t, "127.0.0.1:0", source)})
	var base usage
	harness.Try(t, poll, func() error {
		u, err := r.descriptors()
		base = u
		return err
	})
	burst(t, 300, func(i int) error { return resetMidTransfer(r.ep["source"], i) })
	var u usage
	harness.Try(t, poll, func() error {
		var err error
		if u, err = r.descriptors(); err == nil && u.sockets > base.sockets {
			return fmt.Errorf("%d sockets, baseline %d", u.sockets, base.sockets)
		}
		return err
	})
	if u.pipes > base.pipes+pipeSlack {
		t.Fatalf("connections closed, but Gantry holds %d pipe ends (baseline %d, pool bound %d)", u.pipes, base.pipes, pipeSlack)
	}
}

// graceTimeOut ends a stuck connection at SIGTERM also when the
// serversTransport's terminationDelay is negative (no bound), and Gantry
// exits 0: a connection whose two directions are both still open (the
// client's side is closed under its copy, which ends the other at once),
// and one the client half-closed (the server's direction waits without
// bound for a silent server until the shutdown cuts it).
func TestTCPAbuseGraceWithoutTerminationDelay(t *testing.T) {
	for _, tc := range []struct {
		name, server string
		halfClose    bool
	}{{"raw", "", false}, {"net.Dialer", "localhost", false}, {"raw-half-closed", "", true}, {"net.Dialer-half-closed", "localhost", true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := silent(t)
			if tc.server != "" {
				srv = tc.server + ":" + port(srv)
			}
			r := startAbuse(t, abuseRoute{name: "grace", server: srv, transport: "{terminationDelay: -1s}"})
			c, err := dialGantry(r.ep["grace"])
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.ReadFull(c, make([]byte, 64<<10)); err != nil {
				t.Fatalf("the server's first 64 KiB: %v", err)
			}
			if tc.halfClose {
				if err := c.CloseWrite(); err != nil {
					t.Fatal(err)
				}
			}
			if code := r.g.Stop(t); code != 0 {
				t.Errorf("gantry exited with code %d, want 0 after the grace period (1s)", code)
			}
			if err := ends(c); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// With Gantry's descriptor limit at 256, clients that reset mid-transfer
// one after another (never more than 8 open) are all served: the pipes of
// the connections that ended are not piling up until a garbage collection.
func TestTCPAbuseResetsUnderDescriptorLimit(t *testing.T) {
	r := startAbuse(t, abuseRoute{name: "source", server: startBackend(t, "127.0.0.1:0", source)})
	lim := unix.Rlimit{Cur: 256, Max: 256}
	if err := unix.Prlimit(r.g.Pid(), unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		t.Fatal(err)
	}
	burst(t, 1000, func(i int) error { return resetMidTransfer(r.ep["source"], i) })
}

// resetMidTransfer is the i-th client that resets its connection to addr
// (a route to a source server) mid-transfer: it sends 256 KiB, reads
// 256 KiB + i of the server's stream through Gantry and closes with
// SO_LINGER 0.
func resetMidTransfer(addr string, i int) error {
	c, err := dialGantry(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Write(make([]byte, 256<<10)); err != nil {
		return err
	}
	if _, err := io.CopyN(io.Discard, c, 256<<10+int64(i)); err != nil {
		return fmt.Errorf("the server's stream through Gantry: %w", err)
	}
	return c.SetLinger(0)
}
