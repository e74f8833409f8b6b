// Command l4load is run.sh's load client for the two layer-4 routes, bounded
// by a duration (-d) and a count (-n, whichever comes first):
//
//   - -mode tcpconn: -c connections in flight, each opens a NEW TCP
//     connection, writes a -req byte request ending in '\n', reads the reply
//     until the server closes (EOF), checks it is -resp bytes, and closes;
//     then the next one. A unit is one such connection; the latency is
//     connect to EOF. The origin closes first, so TIME_WAIT lands on the
//     server side of each hop and the client's ephemeral ports are not used
//     up. -engine epoll (default, Linux) drives them all from one thread
//     with raw non-blocking sockets, the cheapest client; -engine go uses a
//     goroutine and net.Dial per connection.
//   - -mode tcpbulk: -c connections (default for run.sh: 1), each writes
//     -chunk byte blocks as fast as it can while reading the echo back, until
//     the deadline (or -n MB in all), then half-closes and reads to EOF. A
//     unit is one MB (10^6 bytes) echoed; rate is MB/s, no latency.
//   - -mode udp: -c clients, each with its own UDP socket (so its own session
//     in a proxy), in a loop sends a -req byte datagram carrying its client
//     number and a sequence number and waits up to -timeout for the echo
//     with that number. A unit is one echoed datagram; a datagram without
//     its echo in time is lost (counted, then the next one is sent); a late
//     echo of an earlier datagram is skipped; a datagram another client sent
//     is foreign (counted, skipped): the proxy delivered a reply to the
//     wrong client.
//
// Output, one line (run.sh parses it by field position):
//
//	units <n> rate <per s> p50_ms <ms> p99_ms <ms> errors <n> sent <n> lost <n> foreign <n>
//
// -probe sends one unit (tcpbulk: about 1 MB) quietly and exits 0 if it was
// answered without error or loss (run.sh's readiness and sanity check).
// Exit status 1 when no unit completed.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	bucket  = 10 * time.Microsecond
	buckets = int(time.Second / bucket)
)

type config struct {
	addr      string
	req, resp int
	timeout   time.Duration
}

type counters struct {
	total, errs, sent, lost, foreign atomic.Int64
	limit                            int64
}

// take reserves one unit of the -n budget; false once it is spent.
func (c *counters) take() bool {
	return c.sent.Add(1) <= c.limit
}

// result is one run's figures, printed as the output line.
type result struct {
	units, errs, sent, lost, foreign int64
	rate, p50, p99                   float64 // per second; ms
}

func (r result) String() string {
	return fmt.Sprintf("units %d rate %.1f p50_ms %.3f p99_ms %.3f errors %d sent %d lost %d foreign %d",
		r.units, r.rate, r.p50, r.p99, r.errs, r.sent, r.lost, r.foreign)
}

// options are the flags of one run.
type options struct {
	mode, engine string
	conc         int
	dur          time.Duration
	n            int64
	chunk        int
}

func main() {
	var o options
	flag.StringVar(&o.mode, "mode", "tcpconn", "tcpconn, tcpbulk or udp")
	flag.IntVar(&o.chunk, "chunk", 256<<10, "tcpbulk: write size, bytes")
	addr := flag.String("addr", "127.0.0.1:19086", "host:port of the proxy (or origin)")
	flag.IntVar(&o.conc, "c", 50, "connections in flight (tcpconn, tcpbulk) or UDP client sockets (udp)")
	flag.DurationVar(&o.dur, "d", 10*time.Second, "duration")
	flag.Int64Var(&o.n, "n", 5_000_000, "at most this many units in all")
	req := flag.Int("req", 64, "request size, bytes (udp: at least 16)")
	resp := flag.Int("resp", 256, "expected reply size, bytes (tcpconn)")
	timeout := flag.Duration("timeout", 200*time.Millisecond, "udp: wait this long for an echo before counting the datagram lost; tcpconn: 10x this per connection")
	probe := flag.Bool("probe", false, "send one unit and exit 0 if it was answered (quietly)")
	flag.StringVar(&o.engine, "engine", "epoll", "tcpconn: epoll (one thread, raw non-blocking sockets; Linux) or go (a goroutine per worker, net.Dial)")
	flag.Parse()
	cfg := config{addr: *addr, req: max(*req, 16), resp: *resp, timeout: *timeout}
	if *probe {
		o.conc, o.n, o.dur = 1, 1, time.Minute
	}
	r, err := run(&cfg, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, o.mode+":", err)
		os.Exit(2)
	}
	if !*probe {
		fmt.Println(r)
	}
	if r.units == 0 || (*probe && (r.errs > 0 || r.lost > 0)) {
		os.Exit(1)
	}
}

// run is one bounded load: until o.dur has passed or o.n units were sent.
func run(cfg *config, o options) (result, error) {
	var one func(*config, *counters, []byte, *udpClient) (time.Duration, error)
	switch o.mode {
	case "tcpconn":
		one = tcpOne
	case "udp":
		one = udpOne
	case "tcpbulk":
		return bulk(cfg.addr, o.conc, o.dur, o.n, o.chunk), nil
	default:
		return result{}, fmt.Errorf("unknown -mode %q", o.mode)
	}
	var (
		cs   = counters{limit: o.n}
		mu   sync.Mutex
		hist = make([]uint64, buckets+1)
		wg   sync.WaitGroup
	)
	deadline := time.Now().Add(o.dur)
	start := time.Now()
	conc := o.conc
	if o.mode == "tcpconn" && o.engine == "epoll" && haveEpoll {
		if err := tcpEpoll(cfg, conc, deadline, &cs, hist); err != nil {
			return result{}, err
		}
		conc = 0
	}
	for id := range conc {
		wg.Go(func() {
			local := make([]uint64, buckets+1)
			defer func() {
				mu.Lock()
				for i, v := range local {
					hist[i] += v
				}
				mu.Unlock()
			}()
			u, err := newUDPClient(cfg, o.mode, uint64(id))
			if err != nil {
				cs.errs.Add(1)
				fmt.Fprintln(os.Stderr, "socket:", err)
				return
			}
			defer u.close()
			buf := make([]byte, max(cfg.req, cfg.resp)+64)
			for time.Now().Before(deadline) && cs.take() {
				rtt, err := one(cfg, &cs, buf, u)
				if err != nil {
					if cs.errs.Add(1) <= 5 {
						fmt.Fprintln(os.Stderr, o.mode+":", err)
					}
					time.Sleep(time.Millisecond) // a refused connection must not spin
					continue
				}
				if rtt >= 0 {
					local[min(int(rtt/bucket), buckets)]++
					cs.total.Add(1)
				}
			}
		})
	}
	wg.Wait()
	el := min(time.Since(start), o.dur) // the units were sent within -d; the tail is only the last replies
	t := cs.total.Load()
	return result{units: t, rate: float64(t) / el.Seconds(), p50: percentile(hist, t, 0.50), p99: percentile(hist, t, 0.99),
		errs: cs.errs.Load(), sent: min(cs.sent.Load(), cs.limit), lost: cs.lost.Load(), foreign: cs.foreign.Load()}, nil
}

var errShort = errors.New("short reply")

// tcpOne is one short connection: connect, request, reply until EOF, close.
func tcpOne(cfg *config, _ *counters, buf []byte, _ *udpClient) (time.Duration, error) {
	t0 := time.Now()
	c, err := net.DialTimeout("tcp", cfg.addr, 10*cfg.timeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(t0.Add(10 * cfg.timeout))
	for i := range cfg.req - 1 {
		buf[i] = 'q'
	}
	buf[cfg.req-1] = '\n'
	if _, err := c.Write(buf[:cfg.req]); err != nil {
		return 0, err
	}
	got := 0
	for {
		k, err := c.Read(buf[got:])
		got += k
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		if got == len(buf) {
			return 0, fmt.Errorf("reply longer than %d bytes", cfg.resp)
		}
	}
	if got != cfg.resp || buf[0] != 'r' || buf[got-1] != '\n' {
		return 0, fmt.Errorf("%w: %d bytes, want %d", errShort, got, cfg.resp)
	}
	return time.Since(t0), nil
}

// udpClient is one UDP socket with its client number and sequence counter.
type udpClient struct {
	c       *net.UDPConn
	id, seq uint64
}

func newUDPClient(cfg *config, mode string, id uint64) (*udpClient, error) {
	if mode != "udp" {
		return nil, nil
	}
	ra, err := net.ResolveUDPAddr("udp", cfg.addr)
	if err != nil {
		return nil, err
	}
	c, err := net.DialUDP("udp", nil, ra)
	if err != nil {
		return nil, err
	}
	return &udpClient{c: c, id: id}, nil
}

func (u *udpClient) close() {
	if u != nil {
		u.c.Close()
	}
}

// udpOne sends one datagram and waits for its echo. A datagram not echoed
// within cfg.timeout is lost: counted, and reported with rtt -1.
func udpOne(cfg *config, cs *counters, buf []byte, u *udpClient) (time.Duration, error) {
	u.seq++
	msg := buf[:cfg.req]
	for i := 16; i < len(msg); i++ {
		msg[i] = 'u'
	}
	binary.BigEndian.PutUint64(msg, u.seq)
	binary.BigEndian.PutUint64(msg[8:], u.id)
	want := bytes.Clone(msg)
	t0 := time.Now()
	if _, err := u.c.Write(msg); err != nil {
		return 0, err
	}
	_ = u.c.SetReadDeadline(t0.Add(cfg.timeout))
	for {
		k, err := u.c.Read(buf)
		if err != nil {
			// No echo in time, or an ICMP port unreachable (a proxy that had
			// no socket for this client at that moment): the datagram is lost.
			if ne, ok := err.(net.Error); (ok && ne.Timeout()) || errors.Is(err, syscall.ECONNREFUSED) {
				cs.lost.Add(1)
				if !ok || !ne.Timeout() {
					time.Sleep(time.Millisecond) // refused: do not spin
				}
				return -1, nil
			}
			return 0, err
		}
		if k >= 16 && binary.BigEndian.Uint64(buf[8:]) != u.id {
			cs.foreign.Add(1) // another client's datagram
			continue
		}
		if k >= 16 && binary.BigEndian.Uint64(buf) < u.seq {
			continue // the late echo of a datagram already counted lost
		}
		if !bytes.Equal(buf[:k], want) {
			return 0, fmt.Errorf("echo differs: %d bytes, want %d", k, len(want))
		}
		return time.Since(t0), nil
	}
}

// percentile returns the q-quantile of the histogram in milliseconds (the
// upper edge of its bucket).
func percentile(hist []uint64, n int64, q float64) float64 {
	want := uint64(float64(n) * q)
	var seen uint64
	for i, v := range hist {
		seen += v
		if seen > want {
			return float64(time.Duration(i+1)*bucket) / float64(time.Millisecond)
		}
	}
	return 0
}
