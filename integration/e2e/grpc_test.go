package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// startGRPC serves the standard health service on a loopback port, with
// creds (nil: plaintext HTTP/2). Every unary answer carries the trailing
// metadata x-count: 5 (case 039's custom trailer).
func startGRPC(t *testing.T, creds credentials.TransportCredentials) (*health.Server, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts := []grpc.ServerOption{grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		_ = grpc.SetTrailer(ctx, metadata.Pairs("x-count", "5"))
		return h(ctx, req)
	})}
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	srv := grpc.NewServer(opts...)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return hs, l.Addr().String()
}

// gRPC end to end through the binary (case 039 and issue 16): h2c and
// https upstreams, unary calls with trailing metadata, a trailers-only
// error (NOT_FOUND before any message), a server stream delivered as it
// is produced, healthCheck.mode grpc taking the server out and back, and
// the gRPC status in the Prometheus metrics.
func TestGRPCThroughGantry(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeCert(t, dir, "grpc.test", 7)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	plainHS, plainAddr := startGRPC(t, nil)
	_, tlsAddr := startGRPC(t, credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}))
	adm := harness.FreeAddr(t)
	p := startProxy(t, map[string]string{"web": "", "websecure": "", "traefik": adm}, "metrics:\n  prometheus: {}\n", fmt.Sprintf(`
http:
  routers:
    g:  {rule: "Host(`+"`grpc.test`"+`)", service: h2c, entryPoints: [web]}
    gs: {rule: "Host(`+"`grpc.test`"+`)", service: overtls, entryPoints: [websecure], tls: {}}
    gw: {rule: "Host(`+"`web.test`"+`)", service: h2c, entryPoints: [web], middlewares: [gw]}
  middlewares:
    gw: {grpcWeb: {allowOrigins: ["https://app.test"]}}
  services:
    h2c:
      loadBalancer:
        servers: [{url: "h2c://%s"}]
        healthCheck: {mode: grpc, interval: 100ms, unhealthyInterval: 50ms, timeout: 2s}
    overtls:
      loadBalancer:
        servers: [{url: "https://%s"}]
        serversTransport: skipverify
        healthCheck: {mode: grpc, interval: 100ms, timeout: 2s}
  serversTransports:
    skipverify: {insecureSkipVerify: true}
tls:
  certificates:
    - {certFile: %q, keyFile: %q}
`, plainAddr, tlsAddr, certFile, keyFile))
	dial := func(addr string, creds credentials.TransportCredentials) healthpb.HealthClient {
		conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds), grpc.WithAuthority("grpc.test"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		return healthpb.NewHealthClient(conn)
	}
	plain := dial(p.EntryPoints["web"], insecure.NewCredentials())
	overTLS := dial(p.EntryPoints["websecure"], credentials.NewTLS(&tls.Config{ServerName: "grpc.test", InsecureSkipVerify: true})) //nolint:gosec // self-signed test certificate
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	for name, c := range map[string]healthpb.HealthClient{"h2c upstream": plain, "https upstream over a TLS entrypoint": overTLS} {
		var trailer metadata.MD
		resp, err := c.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("%s: Check: %v %v", name, resp.GetStatus(), err)
		}
		if got := strings.Join(trailer.Get("x-count"), ","); got != "5" {
			t.Errorf("%s: trailing metadata x-count = %q, want 5", name, got)
		}
		// Trailers-only: NOT_FOUND with its message, never a bare 200.
		_, err = c.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"})
		if st, _ := status.FromError(err); st.Code() != codes.NotFound || !strings.Contains(st.Message(), "unknown service") {
			t.Errorf("%s: trailers-only error: %v, want NotFound unknown service", name, err)
		}
	}

	// A server stream: each message arrives when the server sends it.
	stream, err := plain.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := stream.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("first stream message: %v %v", m, err)
	}
	plainHS.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	if m, err := stream.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("second stream message: %v %v", m, err)
	}
	// The gRPC health check takes the only server out: Unavailable.
	harness.Try(t, wait, func() error {
		_, err := plain.Check(ctx, &healthpb.HealthCheckRequest{})
		if status.Code(err) != codes.Unavailable {
			return fmt.Errorf("Check while NOT_SERVING: %v, want Unavailable", err)
		}
		return nil
	})
	plainHS.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	harness.Try(t, wait, func() error {
		_, err := plain.Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	})
	// gRPC-Web (case 039): an OK call ends with one 0x80 trailer frame
	// carrying grpc-status 0; a trailers-only error has grpc-status in the
	// headers and no empty trailer frame (Traefik 13842).
	grpcWeb := func(msg []byte) (*http.Response, []byte) {
		body := append([]byte{0, 0, 0, 0, byte(len(msg))}, msg...)
		req, _ := http.NewRequest(http.MethodPost, "http://"+p.EntryPoints["web"]+"/grpc.health.v1.Health/Check", bytes.NewReader(body))
		req.Host = "web.test"
		req.Header.Set("Content-Type", "application/grpc-web+proto")
		req.Header.Set("Origin", "https://app.test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, b := grpcWeb(nil)
	if i := bytes.LastIndexByte(b, 0x80); resp.StatusCode != 200 || i < 0 || !bytes.Contains(b[i:], []byte("grpc-status: 0")) || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.test" {
		t.Errorf("gRPC-Web OK call: %d %q %v", resp.StatusCode, b, resp.Header)
	}
	resp, b = grpcWeb(append([]byte{0x0a, 4}, "nope"...)) // HealthCheckRequest{service: "nope"}
	if resp.Header.Get("Grpc-Status") != "5" || len(b) != 0 {
		t.Errorf("gRPC-Web trailers-only: grpc-status %q, body % x; want 5 and no frame at all", resp.Header.Get("Grpc-Status"), b)
	}
	// Metrics count gRPC calls by gRPC status (5 = NotFound), not HTTP 200.
	harness.TryGet(t, wait, "http://"+adm+"/metrics", harness.StatusIs(200),
		harness.BodyContains(`traefik_service_requests_total{code="5",method="POST",protocol="grpc",service="h2c@file"}`),
		harness.BodyContains(`traefik_service_requests_total{code="0",method="POST",protocol="grpc",service="overtls@file"}`))
}

// Issue 16's "done when": a dynamic file using every option it names loads
// with no problem and no "unsupported" warning.
func TestV37OptionsValidate(t *testing.T) {
	bin := harness.GantryBin(t)
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "v37-options.yml"))
	if err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dir, "options.yml", string(data))
	out, err := exec.Command(bin, "validate", "--entrypoints.web.address=127.0.0.1:0", "--providers.file.directory="+dir).CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "valid: 0 warnings") || strings.Contains(strings.ToLower(string(out)), "unsupported") {
		t.Errorf("gantry validate: exit %d\n%s", exitCode(err), out)
	}
}
