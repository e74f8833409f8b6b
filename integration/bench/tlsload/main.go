// Command tlsload measures full TLS handshakes per second against a server:
// each request opens a new TLS connection (no session resumption), sends one
// HTTP/1.1 request with "Connection: close", reads the whole response and
// closes. It runs for -d and prints "handshakes N rps R errors E".
//
// Used by run.sh; only loopback targets are meant (the address is a flag).
package main

import (
	"bufio"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8443", "host:port to connect to")
	host := flag.String("host", "bench.local", "SNI and Host header")
	conc := flag.Int("c", 16, "concurrent connections")
	dur := flag.Duration("d", 10*time.Second, "duration")
	tls12 := flag.Bool("tls12", false, "force TLS 1.2 with ECDHE-RSA-AES256-GCM-SHA384 (or ECDHE-ECDSA-AES256-GCM-SHA384 for ECDSA keys)")
	flag.Parse()

	cfg := &tls.Config{ServerName: *host, InsecureSkipVerify: true, ClientSessionCache: nil}
	if *tls12 {
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
		cfg.CipherSuites = []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}
	} else {
		cfg.MinVersion = tls.VersionTLS13
	}
	var ok, errs atomic.Int64
	deadline := time.Now().Add(*dur)
	req := fmt.Sprintf("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", *host)
	var wg sync.WaitGroup
	for range *conc {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := once(*addr, cfg, req); err != nil {
					errs.Add(1)
					continue
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	fmt.Printf("handshakes %d rps %.1f errors %d\n", ok.Load(), float64(ok.Load())/dur.Seconds(), errs.Load())
	if ok.Load() == 0 {
		os.Exit(1)
	}
}

func once(addr string, cfg *tls.Config, req string) error {
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
