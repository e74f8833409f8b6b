// Command idleconns opens -n keep-alive HTTP/1.1 connections to -addr, sends
// one request on each (so the server has handled a request and holds an idle
// keep-alive connection), then keeps them all open for -hold and prints
// "open N failed F". run.sh reads the server's RSS while they are held.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "host:port")
	host := flag.String("host", "bench.local", "Host header")
	n := flag.Int("n", 10000, "connections")
	hold := flag.Duration("hold", 15*time.Second, "how long to hold them")
	flag.Parse()
	conns := make([]net.Conn, 0, *n)
	failed := 0
	req := fmt.Sprintf("GET / HTTP/1.1\r\nHost: %s\r\n\r\n", *host)
	for range *n {
		c, err := net.DialTimeout("tcp", *addr, 5*time.Second)
		if err != nil {
			failed++
			continue
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			failed++
			c.Close()
			continue
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			failed++
			c.Close()
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c.SetDeadline(time.Time{})
		conns = append(conns, c)
	}
	fmt.Printf("open %d failed %d\n", len(conns), failed)
	os.Stdout.Sync()
	time.Sleep(*hold)
	for _, c := range conns {
		c.Close()
	}
}
