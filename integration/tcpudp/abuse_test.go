package tcpudp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// The abuse tests attack Gantry's TCP path (a server given by IP address is
// dialled on a raw socket and both directions splice, issue 27) as hostile
// clients and broken servers would, through the real binary: every case is
// bounded in time and size and asserts behaviour (bytes intact, the
// connection ends, Gantry's descriptors and goroutines back to their
// baseline), never a rate.

// abuseRoute is one entrypoint of an abuse rig, routed by HostSNI(`*`)
// (or rule, when set) to server through a serversTransport of its own.
type abuseRoute struct {
	name, server string
	transport    string // the serversTransport's YAML fields, "{...}"
	rule         string // default HostSNI(`*`)
	passthrough  bool   // tls.passthrough on the router
}

// abuseRig is a gantry with one entrypoint per route and the API's debug
// endpoints (pprof) on entrypoint traefik.
type abuseRig struct {
	g   *harness.Gantry
	api string            // the traefik entrypoint's address
	ep  map[string]string // route name -> its entrypoint's address
}

// startAbuse starts gantry with routes and waits until the API lists each
// router.
func startAbuse(t *testing.T, routes ...abuseRoute) *abuseRig {
	t.Helper()
	r := &abuseRig{api: harness.FreeAddr(t), ep: map[string]string{}}
	eps := fmt.Sprintf("  traefik:\n    address: %q\n", r.api)
	var routers, services, transports strings.Builder
	for _, rt := range routes {
		r.ep[rt.name] = harness.FreeAddr(t)
		eps += fmt.Sprintf("  %s:\n    address: %q\n    transport: {lifeCycle: {graceTimeOut: 1s}}\n", rt.name, r.ep[rt.name])
		rule := rt.rule
		if rule == "" {
			rule = "HostSNI(`*`)"
		}
		tls := ""
		if rt.passthrough {
			tls = ", tls: {passthrough: true}"
		}
		fmt.Fprintf(&routers, "    %s: {entryPoints: [%s], rule: %q, service: %s%s}\n", rt.name, rt.name, rule, rt.name, tls)
		fmt.Fprintf(&services, "    %s: {loadBalancer: {serversTransport: %s, servers: [{address: %q}]}}\n", rt.name, rt.name, rt.server)
		tr := rt.transport
		if tr == "" {
			tr = "{}"
		}
		fmt.Fprintf(&transports, "    %s: %s\n", rt.name, tr)
	}
	dyn := "tcp:\n  routers:\n" + routers.String() + "  services:\n" + services.String() +
		"  serversTransports:\n" + transports.String()
	r.g, _ = gantry(t, strings.TrimRight(eps, "\n"), dyn, "api: {insecure: true, dashboard: false, debug: true}")
	for _, rt := range routes {
		harness.Try(t, poll, func() error {
			resp, err := harness.Get("http://" + r.api + "/api/tcp/routers/" + rt.name + "@file")
			if err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("router %s: API status %d", rt.name, resp.StatusCode)
			}
			return nil
		})
	}
	return r
}

// usage is what Gantry holds: open descriptors by kind (/proc/<pid>/fd)
// and goroutines (/debug/pprof/goroutine), and its resident memory, bytes.
type usage struct {
	sockets, pipes, others, goroutines int
	rss                                int64
}

func (u usage) String() string {
	return fmt.Sprintf("%d sockets, %d pipe ends, %d other descriptors, %d goroutines, RSS %d KiB",
		u.sockets, u.pipes, u.others, u.goroutines, u.rss>>10)
}

// descriptors reads Gantry's descriptors and RSS from /proc, which makes
// Gantry allocate nothing (so no garbage collection closes a descriptor
// dropped without Close meanwhile).
func (r *abuseRig) descriptors() (usage, error) {
	var u usage
	pid := r.g.Pid()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return u, err
	}
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join(dir, e.Name()))
		switch {
		case err != nil: // closed meanwhile
		case strings.HasPrefix(l, "socket:"):
			u.sockets++
		case strings.HasPrefix(l, "pipe:"):
			u.pipes++
		default:
			u.others++
		}
	}
	u.rss, err = rssOf(pid)
	return u, err
}

// usage is descriptors with the goroutine count (whose request adds one
// connection and its goroutine to every reading alike).
func (r *abuseRig) usage() (usage, error) {
	u, err := r.descriptors()
	if err != nil {
		return u, err
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + r.api + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return u, err
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil {
		return u, fmt.Errorf("goroutine profile: %w", err)
	}
	n, ok := strings.CutPrefix(strings.TrimSpace(line), "goroutine profile: total ")
	if !ok {
		return u, fmt.Errorf("goroutine profile starts %q", line)
	}
	u.goroutines, err = strconv.Atoi(n)
	return u, err
}

// rssOf is process pid's VmRSS, bytes.
func rssOf(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// pipeSlack is how many pipe ends above the baseline may stay open after a
// burst: empty splice pipes kept for reuse (pooled, two ends each, one per
// direction of each connection the bursts run at once), not one per
// connection served.
const pipeSlack = 4 * abuseParallel

// settle checks that Gantry is back to base after a burst. First its
// sockets and other descriptors (not pipes), read from /proc only: a
// socket dropped without Close, which only a garbage collection would
// close, stays counted. Then its goroutines (back to base at most) and
// pipe ends (within pipeSlack of base), through the goroutine profile,
// whose requests make Gantry allocate: a splice pipe left to the garbage
// collector (rawtcp.Copy drops one on every error) is closed meanwhile.
// Each waits up to 30s; t fails with the last reading.
func (r *abuseRig) settle(t *testing.T, base usage) {
	t.Helper()
	start := time.Now()
	var first, last usage
	wait := func(read func() (usage, error), back func(usage) bool, what string) {
		t.Helper()
		err := harness.Poll(30*time.Second, func() error {
			u, err := read()
			if err != nil {
				return err
			}
			if first == (usage{}) {
				first = u
			}
			if last = u; !back(u) {
				return fmt.Errorf("%s not back to the baseline", what)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("after the burst Gantry holds %v; baseline %v (pipes may exceed it by %d): %v", last, base, pipeSlack, err)
		}
	}
	wait(r.descriptors, func(u usage) bool { return u.sockets <= base.sockets && u.others <= base.others }, "sockets")
	wait(r.usage, func(u usage) bool { return u.goroutines <= base.goroutines && u.pipes <= base.pipes+pipeSlack }, "goroutines or pipes")
	t.Logf("right after: %v; back to the baseline in %v: %v", first, time.Since(start).Round(time.Millisecond), last)
}

// abuseParallel is how many clients a burst runs at once.
const abuseParallel = 8

// burst runs n clients, abuseParallel at a time, and fails t with the
// first error one returns (naming the client).
func burst(t *testing.T, n int, client func(i int) error) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range abuseParallel {
		wg.Go(func() {
			for i := range next {
				if err := client(i); err != nil {
					cancel(fmt.Errorf("client %d: %w", i, err))
				}
			}
		})
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		t.Fatal(err)
	}
}

// backend is a test server: serve runs on its own goroutine for each
// connection accepted; the test's cleanup closes the listener and every
// connection and waits for them.
type backend struct {
	l     net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// startBackend listens on address ("127.0.0.1:0", "[::1]:0") and serves
// each connection with serve; it returns the listening address.
func startBackend(t *testing.T, address string, serve func(*net.TCPConn)) string {
	t.Helper()
	l, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{l: l, conns: map[net.Conn]struct{}{}}
	b.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.conns[c] = struct{}{}
			b.mu.Unlock()
			b.wg.Go(func() {
				defer func() {
					b.mu.Lock()
					delete(b.conns, c)
					b.mu.Unlock()
					c.Close()
				}()
				serve(c.(*net.TCPConn))
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		b.mu.Lock()
		for c := range b.conns {
			c.Close()
		}
		b.mu.Unlock()
		b.wg.Wait()
	})
	return l.Addr().String()
}

// echo writes back what it reads until end of stream, then closes.
func echo(c *net.TCPConn) {
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	_, _ = io.Copy(c, c)
}

// source writes an endless stream until a write fails, discarding what
// it reads.
func source(c *net.TCPConn) {
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { _, _ = io.Copy(io.Discard, c) })
	buf := make([]byte, 64<<10)
	for {
		if _, err := c.Write(buf); err != nil {
			c.Close() // ends the reader
			return
		}
	}
}

// resetter reads 64 KiB and resets the connection (SO_LINGER 0).
func resetter(c *net.TCPConn) {
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	_, _ = io.CopyN(io.Discard, c, 64<<10)
	_ = c.SetLinger(0)
}

// dialGantry connects to addr with a deadline of a minute on the
// connection, so that no client of a case can hang it.
func dialGantry(addr string) (*net.TCPConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	return c.(*net.TCPConn), nil
}

// ends reads c until it ends (end of stream or reset) and fails when the
// minute's deadline comes first: Gantry left the connection open.
func ends(c net.Conn) error {
	_, err := io.Copy(io.Discard, c)
	if os.IsTimeout(err) {
		return fmt.Errorf("connection still open after a minute: %w", err)
	}
	return nil
}
