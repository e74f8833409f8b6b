// Command wsload measures WebSocket echo round trips: -c connections, each
// upgraded once (ws://<host><path> dialled at -addr), then, until -d has
// passed, sends one binary message of -size bytes, waits for its echo,
// checks it, and sends the next. It prints one line:
//
//	messages N rate R p50_ms X p99_ms Y errors E
//
// N counts echoed messages, R is N per second of -d, X and Y are round-trip
// percentiles with 10 µs resolution (capped at 1 s). Used by run.sh; only
// loopback targets are meant (the address is a flag). Exits 1 when no
// message came back.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

const (
	bucket  = 10 * time.Microsecond
	buckets = int(time.Second / bucket)
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "host:port to connect to")
	host := flag.String("host", "bench.local", "Host header")
	path := flag.String("path", "/ws", "request path")
	conc := flag.Int("c", 50, "connections")
	dur := flag.Duration("d", 10*time.Second, "duration")
	size := flag.Int("size", 1024, "message size, bytes")
	flag.Parse()

	d := websocket.Dialer{
		NetDialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", *addr)
		},
		HandshakeTimeout: 5 * time.Second,
		ReadBufferSize:   *size + 64,
		WriteBufferSize:  *size + 64,
	}
	msg := bytes.Repeat([]byte("w"), *size)
	var (
		total, errs atomic.Int64
		mu          sync.Mutex
		hist        = make([]uint64, buckets+1)
		wg          sync.WaitGroup
	)
	deadline := time.Now().Add(*dur)
	for range *conc {
		wg.Go(func() {
			local := make([]uint64, buckets+1)
			defer func() {
				mu.Lock()
				for i, v := range local {
					hist[i] += v
				}
				mu.Unlock()
			}()
			c, _, err := d.Dial("ws://"+*host+*path, http.Header{})
			if err != nil {
				errs.Add(1)
				fmt.Fprintln(os.Stderr, "dial:", err)
				return
			}
			defer c.Close()
			buf := make([]byte, *size)
			for time.Now().Before(deadline) {
				c.NetConn().SetDeadline(time.Now().Add(5 * time.Second))
				t0 := time.Now()
				if err := c.WriteMessage(websocket.BinaryMessage, msg); err != nil {
					errs.Add(1)
					return
				}
				_, r, err := c.NextReader()
				if err != nil {
					errs.Add(1)
					return
				}
				n, err := io.ReadFull(r, buf)
				if err != nil || n != *size || buf[0] != 'w' || buf[n-1] != 'w' {
					errs.Add(1)
					return
				}
				rtt := int(time.Since(t0) / bucket)
				local[min(rtt, buckets)]++
				total.Add(1)
			}
			c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		})
	}
	wg.Wait()
	n := total.Load()
	fmt.Printf("messages %d rate %.1f p50_ms %.3f p99_ms %.3f errors %d\n", n, float64(n)/dur.Seconds(),
		percentile(hist, n, 0.50), percentile(hist, n, 0.99), errs.Load())
	if n == 0 {
		os.Exit(1)
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
