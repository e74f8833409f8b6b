// Command tcpthroughput compares one TCP connection's throughput through
// Gantry's HostSNI(`*`) TCP router and through HAProxy's mode tcp (option
// splice-auto), per proxy CPU-second (from /proc/<pid>/stat): a client
// writes N bytes to an echo server behind each proxy and reads them back.
// Linux only; needs a built gantry binary and Debian's haproxy.
//
//	go build -o /tmp/gantry ./cmd/gantry
//	go run ./integration/bench/tcpthroughput -gantry /tmp/gantry -mib 4096
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	gantry := flag.String("gantry", "gantry", "gantry binary")
	haproxy := flag.String("haproxy", "haproxy", "haproxy binary")
	mib := flag.Int64("mib", 4096, "MiB sent (and echoed back) per run")
	runs := flag.Int("runs", 2, "runs per proxy")
	flag.Parse()
	dir, err := os.MkdirTemp("", "tcpthroughput")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	echo := listen()
	go serveEcho(echo)
	gAddr, hAddr := free(), free()
	dyn := filepath.Join(dir, "dyn")
	must(os.Mkdir(dyn, 0o755))
	must(os.WriteFile(filepath.Join(dyn, "d.yml"), fmt.Appendf(nil, "tcp:\n  routers:\n    r:\n      rule: HostSNI(`*`)\n      service: s\n  services:\n    s:\n      loadBalancer:\n        servers:\n          - address: %q\n", echo.Addr()), 0o644))
	must(os.WriteFile(filepath.Join(dir, "g.yml"), fmt.Appendf(nil, "entryPoints:\n  raw:\n    address: %q\nproviders:\n  file:\n    directory: %q\nstore:\n  path: %q\nlog:\n  level: WARN\n", gAddr, dyn, filepath.Join(dir, "g.db")), 0o644))
	must(os.WriteFile(filepath.Join(dir, "h.cfg"), fmt.Appendf(nil, "defaults\n  mode tcp\n  option splice-auto\n  timeout connect 5s\n  timeout client 60s\n  timeout server 60s\nfrontend f\n  bind %s\n  default_backend b\nbackend b\n  server e %s\n", hAddr, echo.Addr()), 0o644))
	g := start(*gantry, "--configFile="+filepath.Join(dir, "g.yml"))
	defer g.Process.Kill()
	h := start(*haproxy, "-f", filepath.Join(dir, "h.cfg"), "-db")
	defer h.Process.Kill()
	for _, a := range []string{gAddr, hAddr} {
		waitRoute(a)
	}
	for range *runs {
		measure("gantry", gAddr, g.Process.Pid, *mib<<20)
		measure("haproxy", hAddr, h.Process.Pid, *mib<<20)
	}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func listen() net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	return l
}

func free() string {
	l := listen()
	defer l.Close()
	return l.Addr().String()
}

func serveEcho(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			_, _ = io.Copy(c, c)
			_ = c.(*net.TCPConn).CloseWrite()
		}()
	}
}

func start(bin string, args ...string) *exec.Cmd {
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = os.Stderr, os.Stderr
	must(c.Start())
	return c
}

// waitRoute waits until a byte sent through addr comes back.
func waitRoute(addr string) {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.SetDeadline(time.Now().Add(time.Second))
			_, _ = c.Write([]byte{1})
			_, err = c.Read(make([]byte, 1))
			c.Close()
			if err == nil {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	log.Fatalf("no route through %s", addr)
}

// cpu is the user+system time of pid (clock ticks of 10ms).
func cpu(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	must(err)
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.Atoi(f[11])
	sy, _ := strconv.Atoi(f[12])
	return time.Duration(u+sy) * 10 * time.Millisecond
}

func measure(name, addr string, pid int, total int64) {
	c, err := net.Dial("tcp", addr)
	must(err)
	defer c.Close()
	buf := make([]byte, 1<<20)
	c0, t0 := cpu(pid), time.Now()
	go func() {
		for w := int64(0); w < total; w += int64(len(buf)) {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
		_ = c.(*net.TCPConn).CloseWrite()
	}()
	n, _ := io.Copy(io.Discard, c)
	el, used := time.Since(t0), cpu(pid)-c0
	fmt.Printf("%-8s %5d MiB echoed in %7v: %5.0f MB/s wall, proxy CPU %6v, %5.0f MB per proxy CPU-second\n",
		name, n>>20, el.Round(time.Millisecond), float64(n)/el.Seconds()/1e6, used, float64(n)/used.Seconds()/1e6)
}
