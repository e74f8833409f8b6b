package tcpudp

import (
	"sync"
	"testing"
	"time"
)

// exchangeVia runs x through Gantry's entrypoint addr and fails t with
// the client's or the server's error (the server's outcome comes on
// results).
func exchangeVia(t *testing.T, addr string, x exchange, results <-chan error) {
	t.Helper()
	c, err := dialGantry(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := clientExchange(c, x); err != nil {
		t.Errorf("client: %v", err)
	}
	if err := <-results; err != nil {
		t.Errorf("server: %v", err)
	}
}

const mib = 1 << 20

// maxRSS samples process pid's RSS every 20ms until stop is closed and
// returns the largest seen, bytes.
func maxRSS(pid int, stop <-chan struct{}) int64 {
	var m int64
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if r, err := rssOf(pid); err == nil {
			m = max(m, r)
		}
		select {
		case <-stop:
			return m
		case <-tick.C:
		}
	}
}

// Every byte crosses the raw path intact, both ways at once, in chunks of
// random sizes, through half-closes in either order (a FIN right after a
// short read) and zero-byte streams.
func TestTCPAbuseIntegrity(t *testing.T) {
	results := make(chan error, 8)
	r := startAbuse(t, abuseRoute{name: "stream", server: startBackend(t, "127.0.0.1:0", streamServer(results)), transport: "{terminationDelay: 1m}"})
	ep := r.ep["stream"]
	for _, tc := range []struct {
		name string
		x    exchange
	}{
		{"32 MiB both ways at once", exchange{mode: bothAtOnce, up: 32 * mib, down: 32 * mib, upSeed: 1, downSeed: 2}},
		{"client sends 3 bytes and half-closes, then 16 MiB back", exchange{mode: clientFirst, up: 3, down: 16 * mib, upSeed: 3, downSeed: 4}},
		{"client sends 16 MiB and half-closes, then 3 bytes back", exchange{mode: clientFirst, up: 16 * mib, down: 3, upSeed: 5, downSeed: 6}},
		{"server sends 5 bytes and half-closes, then 16 MiB up", exchange{mode: serverFirst, up: 16 * mib, down: 5, upSeed: 7, downSeed: 8}},
		{"server sends 16 MiB and half-closes, then 5 bytes up", exchange{mode: serverFirst, up: 5, down: 16 * mib, upSeed: 9, downSeed: 10}},
		{"zero bytes both ways", exchange{mode: bothAtOnce, upSeed: 11, downSeed: 12}},
		{"zero bytes up, then 1 MiB down", exchange{mode: clientFirst, down: mib, upSeed: 13, downSeed: 14}},
	} {
		t.Run(tc.name, func(t *testing.T) { exchangeVia(t, ep, tc.x, results) })
	}
	t.Run("4 exchanges of 8 MiB both ways at once", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				c, err := dialGantry(ep)
				if err != nil {
					t.Error(err)
					return
				}
				defer c.Close()
				if err := clientExchange(c, exchange{mode: bothAtOnce, up: 8 * mib, down: 8 * mib, upSeed: uint64(100 + i), downSeed: uint64(200 + i)}); err != nil {
					t.Errorf("client %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		for range 4 {
			if err := <-results; err != nil {
				t.Errorf("server: %v", err)
			}
		}
	})
}

// A server given as the IPv6 loopback or an IPv4-mapped address is dialled
// on the raw path, one given by host name through net.Dialer: all carry
// the bytes both ways.
func TestTCPAbuseAddresses(t *testing.T) {
	results := make(chan error, 8)
	v4 := startBackend(t, "127.0.0.1:0", streamServer(results))
	v6 := startBackend(t, "[::1]:0", streamServer(results))
	r := startAbuse(t,
		abuseRoute{name: "ipv6", server: v6},
		abuseRoute{name: "mapped", server: "[::ffff:127.0.0.1]:" + port(v4)},
		abuseRoute{name: "hostname", server: "localhost:" + port(v4)},
	)
	for i, name := range []string{"ipv6", "mapped", "hostname"} {
		t.Run(name, func(t *testing.T) {
			exchangeVia(t, r.ep[name], exchange{mode: bothAtOnce, up: 4 << 20, down: 4 << 20, upSeed: uint64(2 * i), downSeed: uint64(2*i + 1)}, results)
		})
	}
}

// A slow reader on either side holds a 64 MiB transfer back rather than
// Gantry's memory: its RSS grows by less than a quarter of the transfer
// (each case on a fresh Gantry, whose heap no earlier transfer grew).
func TestTCPAbuseSlowReaders(t *testing.T) {
	const size = 64 * mib
	for _, tc := range []struct {
		name string
		x    exchange
	}{
		{"slow client", exchange{mode: serverStream, down: size, downSeed: 15, readPause: time.Millisecond}},
		{"slow server", exchange{mode: clientFirst, up: size, upSeed: 16, serverPause: time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := make(chan error, 8)
			r := startAbuse(t, abuseRoute{name: "stream", server: startBackend(t, "127.0.0.1:0", streamServer(results)), transport: "{terminationDelay: 1m}"})
			before, err := rssOf(r.g.Pid())
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var peak int64
			var wg sync.WaitGroup
			wg.Go(func() { peak = maxRSS(r.g.Pid(), stop) })
			exchangeVia(t, r.ep["stream"], tc.x, results)
			close(stop)
			wg.Wait()
			t.Logf("Gantry's RSS %d KiB before, at most %d KiB during the transfer", before>>10, peak>>10)
			if peak-before > size/4 {
				t.Errorf("Gantry's RSS grew by %d KiB for a %d MiB transfer to a slow reader", (peak-before)>>10, size/mib)
			}
		})
	}
}
