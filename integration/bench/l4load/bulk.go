package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// bulk runs the tcpbulk mode: conc connections, each writing chunk-byte
// blocks while a reader counts the echo, until dur has passed or limitMB
// megabytes were written in all. A connection whose echo differs in length
// from what it sent is an error.
func bulk(addr string, conc int, dur time.Duration, limitMB int64, chunk int) result {
	var (
		echoed, written atomic.Int64
		errs            atomic.Int64
		wg              sync.WaitGroup
	)
	limit := limitMB * 1e6
	deadline := time.Now().Add(dur)
	start := time.Now()
	for range conc {
		wg.Go(func() {
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				errs.Add(1)
				fmt.Fprintln(os.Stderr, "tcpbulk:", err)
				return
			}
			defer c.Close()
			var sent int64
			done := make(chan struct{})
			go func() { // the writer; the reader below ends after its half-close
				defer close(done)
				buf := make([]byte, chunk)
				for i := range buf {
					buf[i] = 'b'
				}
				for time.Now().Before(deadline) && written.Add(int64(chunk)) <= limit+int64(chunk) {
					if _, err := c.Write(buf); err != nil {
						errs.Add(1)
						fmt.Fprintln(os.Stderr, "tcpbulk write:", err)
						return
					}
					sent += int64(chunk)
				}
				_ = c.(*net.TCPConn).CloseWrite()
			}()
			_ = c.SetReadDeadline(deadline.Add(30 * time.Second))
			got, err := io.Copy(io.Discard, c)
			echoed.Add(got)
			<-done
			if err != nil || got != sent {
				errs.Add(1)
				fmt.Fprintf(os.Stderr, "tcpbulk: %d bytes echoed of %d sent (%v)\n", got, sent, err)
			}
		})
	}
	wg.Wait()
	el := min(time.Since(start), dur)
	mb := echoed.Load() / 1e6
	return result{units: mb, rate: float64(echoed.Load()) / 1e6 / el.Seconds(), errs: errs.Load()}
}
