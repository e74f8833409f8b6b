package tcpudp

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
	"github.com/gantry-proxy/gantry/internal/deaflisten"
)

// Hostile clients and broken servers leave nothing behind in Gantry: after
// each burst its sockets and goroutines are back to the baseline and its
// pipes within the reuse pool's bound, and every connection ended.
func TestTCPAbuseLeaks(t *testing.T) {
	r := startAbuse(t,
		abuseRoute{name: "echo", server: startBackend(t, "127.0.0.1:0", echo)},
		abuseRoute{name: "source", server: startBackend(t, "127.0.0.1:0", source)},
		abuseRoute{name: "resetter", server: startBackend(t, "127.0.0.1:0", resetter)},
		abuseRoute{name: "deaf", server: deaflisten.New(t).String(), transport: "{dialTimeout: 300ms}"},
		abuseRoute{name: "refused", server: harness.DeadAddr(t)},
	)
	// The descriptors before any connection, then a warm-up through each
	// route, so that what Gantry makes once (pools, lazily started
	// goroutines) is in the baseline; no socket of the warm-up may stay.
	var base usage
	harness.Try(t, poll, func() error {
		u, err := r.descriptors()
		base = u
		return err
	})
	for _, ep := range r.ep {
		c, err := dialGantry(ep)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte("warm"))
		_ = c.CloseWrite()
		_, _ = io.CopyN(io.Discard, c, 1<<20)
		c.Close()
	}
	base.goroutines = 1 << 20 // not yet known
	r.settle(t, base)
	harness.Try(t, poll, func() error {
		u, err := r.usage()
		base.goroutines, base.pipes = u.goroutines, u.pipes
		return err
	})
	// The sockets: the fewest of a few readings (a probe's connection
	// may still be closing).
	for range 5 {
		if d, err := r.descriptors(); err == nil {
			base.sockets, base.others = min(base.sockets, d.sockets), min(base.others, d.others)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("baseline: %v", base)
	cases := []struct {
		name   string
		n      int
		client func(i int) error
	}{
		{"short connections", 2000, func(i int) error {
			c, err := dialGantry(r.ep["echo"])
			if err != nil {
				return err
			}
			defer c.Close()
			msg := fmt.Appendf(nil, "ping %d\n", i)
			if _, err := c.Write(msg); err != nil {
				return err
			}
			_ = c.CloseWrite()
			got, err := io.ReadAll(c)
			if err != nil || !bytes.Equal(got, msg) {
				return fmt.Errorf("echo: got %q, %v; want %q", got, err, msg)
			}
			return nil
		}},
		{"zero-byte connections", 400, func(i int) error {
			c, err := dialGantry(r.ep["echo"])
			if err != nil {
				return err
			}
			defer c.Close()
			if i%2 == 0 {
				return nil // closed at once
			}
			_ = c.CloseWrite()
			got, err := io.ReadAll(c)
			if err != nil || len(got) > 0 {
				return fmt.Errorf("echo of nothing: got %q, %v", got, err)
			}
			return nil
		}},
		{"clients reset mid-transfer", 300, func(i int) error { return resetMidTransfer(r.ep["source"], i) }},
		{"servers reset mid-transfer", 300, func(i int) error {
			c, err := dialGantry(r.ep["resetter"])
			if err != nil {
				return err
			}
			defer c.Close()
			done := make(chan error, 1)
			go func() {
				_, err := c.Write(make([]byte, 4<<20))
				done <- err
			}()
			err = ends(c)
			if werr := <-done; os.IsTimeout(werr) {
				return fmt.Errorf("write still blocked after a minute: %w", werr)
			}
			return err
		}},
		{"server never accepts", 40, func(int) error { return helloEnds(r.ep["deaf"]) }},
		{"server refuses", 400, func(int) error { return helloEnds(r.ep["refused"]) }},
		{"clients half-close and never read", 40, func(i int) error {
			c, err := dialGantry(r.ep["source"])
			if err != nil {
				return err
			}
			defer c.Close()
			if _, err := c.Write([]byte("hello")); err != nil {
				return err
			}
			if err := c.CloseWrite(); err != nil {
				return err
			}
			time.Sleep(300 * time.Millisecond) // Gantry's writes to c fill the buffers
			return nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			burst(t, tc.n, tc.client)
			r.settle(t, base)
		})
	}
}

// helloEnds sends a few bytes to Gantry's entrypoint addr, whose server
// cannot be reached, and checks that Gantry ends the connection.
func helloEnds(addr string) error {
	c, err := dialGantry(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, _ = c.Write([]byte("hello"))
	return ends(c)
}
