// Command grpcbench measures, on 127.0.0.1, what a proxy spends per
// request for the protocols of issue 16:
//
//   - gRPC unary calls (grpc.health.v1.Health/Check over h2c) through
//     Gantry and through nginx's grpc_pass, against the same in-process
//     grpc-go backend: calls per CPU-second of the proxy process;
//   - HTTP/3 against HTTP/2 through Gantry itself (TLS, GET of a 1 KiB
//     answer from an in-process backend): requests per CPU-second.
//
// The proxy's CPU time is read from /proc/<pid>/stat (utime+stime) around
// each measured run, so the load client and the backend, which run in this
// process, are not counted. Every run is bounded by -d; the proxies run
// with one core's worth of parallelism (GOMAXPROCS=1, one nginx worker).
// A benchmark, not a test: scripts/test.sh does not run it. Linux only.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

var (
	gantryBin = flag.String("gantry", "", "gantry binary (required)")
	nginxBin  = flag.String("nginx", "nginx", "nginx binary; empty skips the nginx run")
	dur       = flag.Duration("d", 10*time.Second, "measured duration of each run")
	warm      = flag.Duration("warmup", 2*time.Second, "warm-up before each run")
	conc      = flag.Int("c", 32, "concurrent calls in flight")
	conns     = flag.Int("conns", 4, "client connections")
	noH3      = flag.Bool("noh3", false, "skip the HTTP/2 and HTTP/3 GET runs (gRPC only)")
	profile   = flag.String("cpuprofile", "", "write Gantry's Go CPU profile of the measured gRPC run to this file, and its allocation profiles from just before and after it to FILE.allocs0 and FILE.allocs1 (go tool pprof -base FILE.allocs0 BIN FILE.allocs1: what the run allocated; api.debug on a loopback port)")
)

func main() {
	flag.Parse()
	if *gantryBin == "" {
		log.Fatal("-gantry is required")
	}
	dir, err := os.MkdirTemp("", "grpcbench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	backend := startGRPCBackend()
	fmt.Printf("%-28s %10s %10s %12s %16s\n", "run", "calls", "calls/s", "proxy CPU s", "calls/CPU-second")

	// gRPC through Gantry.
	gAddr := freeAddr()
	static := fmt.Sprintf(`entryPoints:
  web: {address: %q}
providers:
  file: {directory: %q}
log: {level: ERROR}
`, gAddr, dir)
	var during func()
	if *profile != "" {
		pAddr := freeAddr()
		static = strings.Replace(static, "entryPoints:\n", fmt.Sprintf("entryPoints:\n  traefik: {address: %q}\n", pAddr), 1) +
			"api: {insecure: true, dashboard: false, debug: true}\n"
		during = func() { saveProfile(pAddr, *profile) }
	}
	g := startGantry(dir, "grpc", gAddr, static, fmt.Sprintf(`http:
  routers: {g: {rule: "PathPrefix(`+"`/`"+`)", service: g}}
  services: {g: {loadBalancer: {servers: [{url: "h2c://%s"}]}}}
`, backend))
	report("grpc unary via gantry", g, grpcLoad(gAddr), during)
	stop(g)

	// gRPC through nginx grpc_pass.
	if *nginxBin != "" {
		nAddr := freeAddr()
		conf := filepath.Join(dir, "nginx.conf")
		must(os.WriteFile(conf, fmt.Appendf(nil, `daemon off;
master_process off;
worker_processes 1;
error_log %s/nginx-error.log error;
pid %s/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %s;
  upstream grpcb { server %s; keepalive 64; }
  server {
    listen %s http2;
    location / { grpc_pass grpc://grpcb; }
  }
}
`, dir, dir, dir, backend, nAddr), 0o600))
		n := exec.Command(*nginxBin, "-c", conf, "-p", dir)
		n.Stderr = os.Stderr
		must(n.Start())
		waitListen(nAddr)
		report("grpc unary via nginx", n, grpcLoad(nAddr), nil)
		stop(n)
	}

	if *noH3 {
		return
	}
	// HTTP/3 against HTTP/2 through Gantry.
	certFile, keyFile := writeCert(dir)
	web := startHTTPBackend()
	hAddr := freeAddr()
	h := startGantry(dir, "h3", hAddr, fmt.Sprintf(`entryPoints:
  websecure: {address: %q, http3: {}}
providers:
  file: {directory: %q}
log: {level: ERROR}
`, hAddr, dir), fmt.Sprintf(`http:
  routers: {a: {rule: "Host(`+"`bench.local`"+`)", service: s, tls: {}}}
  services: {s: {loadBalancer: {servers: [{url: "http://%s"}]}}}
tls:
  certificates: [{certFile: %q, keyFile: %q}]
`, web, certFile, keyFile))
	conf := &tls.Config{ServerName: "bench.local", InsecureSkipVerify: true} //nolint:gosec // self-signed bench certificate
	report("GET 1k via gantry HTTP/2", h, httpLoad(hAddr, func() http.RoundTripper { return &http2.Transport{TLSClientConfig: conf} }), nil)
	report("GET 1k via gantry HTTP/3", h, httpLoad(hAddr, func() http.RoundTripper { return &http3.Transport{TLSClientConfig: conf} }), nil)
	stop(h)
}

// result is one measured run.
type result struct {
	calls int64
	cpu   time.Duration
	wall  time.Duration
}

// measure runs load for warm-up then -d, reading the proxy's CPU time
// around the measured part; during (if not nil) runs beside the measured
// part and is waited for.
func measure(p *exec.Cmd, load func(ctx context.Context, count *atomic.Int64), during func()) result {
	var count atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { load(ctx, &count); close(done) }()
	time.Sleep(*warm)
	c0, n0, t0 := cpuOf(p.Process.Pid), count.Load(), time.Now()
	var side sync.WaitGroup
	if during != nil {
		side.Go(during)
	}
	time.Sleep(*dur)
	c1, n1, t1 := cpuOf(p.Process.Pid), count.Load(), time.Now()
	side.Wait()
	cancel()
	<-done
	return result{calls: n1 - n0, cpu: c1 - c0, wall: t1.Sub(t0)}
}

func report(name string, p *exec.Cmd, load func(ctx context.Context, count *atomic.Int64), during func()) {
	r := measure(p, load, during)
	perCPU := 0.0
	if r.cpu > 0 {
		perCPU = float64(r.calls) / r.cpu.Seconds()
	}
	fmt.Printf("%-28s %10d %10.0f %12.2f %16.0f\n", name, r.calls, float64(r.calls)/r.wall.Seconds(), r.cpu.Seconds(), perCPU)
}

// grpcLoad keeps -c unary Health/Check calls in flight over -conns
// connections to addr until ctx ends.
func grpcLoad(addr string) func(ctx context.Context, count *atomic.Int64) {
	return func(ctx context.Context, count *atomic.Int64) {
		var clients []healthpb.HealthClient
		for range *conns {
			cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			must(err)
			defer cc.Close()
			clients = append(clients, healthpb.NewHealthClient(cc))
		}
		var wg sync.WaitGroup
		for i := range *conc {
			c := clients[i%len(clients)]
			wg.Go(func() {
				for ctx.Err() == nil {
					if _, err := c.Check(ctx, &healthpb.HealthCheckRequest{}); err == nil {
						count.Add(1)
					}
				}
			})
		}
		wg.Wait()
	}
}

// httpLoad keeps -c GETs in flight over -conns transports to addr.
func httpLoad(addr string, mk func() http.RoundTripper) func(ctx context.Context, count *atomic.Int64) {
	return func(ctx context.Context, count *atomic.Int64) {
		var clients []*http.Client
		for range *conns {
			rt := mk()
			if c, ok := rt.(io.Closer); ok {
				defer c.Close()
			}
			clients = append(clients, &http.Client{Transport: rt})
		}
		var wg sync.WaitGroup
		for i := range *conc {
			c := clients[i%len(clients)]
			wg.Go(func() {
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/1k", nil)
					req.Host = "bench.local"
					resp, err := c.Do(req)
					if err != nil {
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == 200 {
						count.Add(1)
					}
				}
			})
		}
		wg.Wait()
	}
}

func startGRPCBackend() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	srv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(l) }()
	return l.Addr().String()
}

func startHTTPBackend() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	body := []byte(strings.Repeat("x", 1024))
	go func() {
		_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
		}))
	}()
	return l.Addr().String()
}

// startGantry writes the static and dynamic files into a fresh
// subdirectory and starts gantry with GOMAXPROCS=1, waiting for its port.
func startGantry(dir, name, addr, static, dynamic string) *exec.Cmd {
	sub := filepath.Join(dir, name)
	must(os.MkdirAll(filepath.Join(sub, "dyn"), 0o700))
	static = strings.ReplaceAll(static, dir, filepath.Join(sub, "dyn"))
	must(os.WriteFile(filepath.Join(sub, "dyn", "dynamic.yml"), []byte(dynamic), 0o600))
	must(os.WriteFile(filepath.Join(sub, "gantry.yml"), []byte(static+"store:\n  path: "+filepath.Join(sub, "gantry.db")+"\n"), 0o600))
	cmd := exec.Command(*gantryBin, "--configFile="+filepath.Join(sub, "gantry.yml"))
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	cmd.Stderr = os.Stderr
	must(cmd.Start())
	waitListen(addr)
	time.Sleep(500 * time.Millisecond) // the file provider's first configuration
	return cmd
}

// saveProfile writes the Go CPU profile of the Gantry whose API (with
// api.debug) listens on addr, taken over the measured duration, to file,
// and its allocation profiles (/debug/pprof/allocs) from just before and
// just after it to file.allocs0 and file.allocs1. A failed fetch is logged;
// the run goes on.
func saveProfile(addr, file string) {
	fetch(fmt.Sprintf("http://%s/debug/pprof/allocs", addr), file+".allocs0")
	fetch(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, max(int(dur.Seconds()), 1)), file)
	fetch(fmt.Sprintf("http://%s/debug/pprof/allocs", addr), file+".allocs1")
}

// fetch writes the body of a GET of url to file.
func fetch(url, file string) {
	resp, err := http.Get(url)
	if err != nil {
		log.Printf("profile: %v", err)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %s", resp.Status)
	}
	if err == nil {
		err = os.WriteFile(file, b, 0o600)
	}
	if err != nil {
		log.Printf("profile %s: %v", url, err)
	}
}

func stop(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// cpuOf returns the user+system CPU time of pid (from /proc/pid/stat).
func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	must(err)
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer l.Close()
	return l.Addr().String()
}

func waitListen(addr string) {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	log.Fatalf("nothing listens on %s", addr)
}

func writeCert(dir string) (string, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench.local"}, DNSNames: []string{"bench.local"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(err)
	kb, err := x509.MarshalECPrivateKey(key)
	must(err)
	cf, kf := filepath.Join(dir, "bench.crt"), filepath.Join(dir, "bench.key")
	must(os.WriteFile(cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	must(os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	return cf, kf
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
