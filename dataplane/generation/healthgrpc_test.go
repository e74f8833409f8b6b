package generation_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// grpcBackend is a real gRPC server (plaintext HTTP/2) with the standard
// health service; it records the metadata of health checks it answers.
func grpcBackend(t *testing.T) (*health.Server, string, chan metadata.MD) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan metadata.MD, 64)
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		select {
		case seen <- md:
		default:
		}
		return h(ctx, req)
	}))
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return hs, l.Addr().String(), seen
}

// healthCheck.mode grpc: SERVING → NOT_SERVING takes the server out,
// SERVING brings it back; a gRPC call through Gantry (h2c upstream)
// reaches it while it is in, and gets UNAVAILABLE while it is out.
func TestGRPCHealthCheck(t *testing.T) {
	hs, addr, seen := grpcBackend(t)
	h := newHarness(t, nil, nil)
	tbl := h.Apply(fmt.Sprintf(`
http:
  routers: {g@file: {rule: "PathPrefix(`+"`/`"+`)", service: g@file}}
  services:
    g@file:
      loadBalancer:
        servers: [{url: "h2c://%s"}]
        healthCheck: {mode: grpc, interval: 50ms, unhealthyInterval: 20ms, timeout: 2s, hostname: health.example, headers: {X-Probe: gantry}}
`, addr), generation.Options{})
	if st := tbl.Report().Routers["g@file"]; st.Status != "enabled" {
		t.Fatalf("router: %+v", st)
	}
	conn, err := grpc.NewClient("passthrough:///"+h.Addr("web"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	call := func() (codes.Code, healthpb.HealthCheckResponse_ServingStatus) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		return status.Code(err), resp.GetStatus()
	}
	up := func() bool {
		for _, b := range h.Pool.Status() {
			if strings.HasSuffix(b.URL, addr) {
				return b.Up
			}
		}
		return false
	}
	if c, s := call(); c != codes.OK || s != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("call through Gantry: %v %v, want OK SERVING", c, s)
	}
	// The checker sends hostname as :authority and headers as metadata.
	dptest.Eventually(t, "a health check with the configured authority and metadata", func() bool {
		select {
		case md := <-seen:
			return strings.Join(md.Get(":authority"), "") == "health.example" && strings.Join(md.Get("x-probe"), "") == "gantry"
		default:
			return false
		}
	})
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	dptest.Eventually(t, "the server marked down", func() bool { return !up() })
	if c, _ := call(); c != codes.Unavailable {
		t.Errorf("call while the only server is down: %v, want Unavailable (503 no available server)", c)
	}
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	dptest.Eventually(t, "the server back up", up)
	if c, s := call(); c != codes.OK || s != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("call after recovery: %v %v", c, s)
	}
	// A server without the health service is down with a clear error.
	hs.Shutdown() // every status NOT_SERVING from now on
	dptest.Eventually(t, "down after Shutdown", func() bool { return !up() })
	for _, b := range h.Pool.Status() {
		if strings.HasSuffix(b.URL, addr) && !strings.Contains(b.LastError, "NOT_SERVING") {
			t.Errorf("last error %q, want it to name NOT_SERVING", b.LastError)
		}
	}
}

func TestGRPCHealthModeValidation(t *testing.T) {
	h := newHarness(t, nil, nil)
	tbl := h.Apply(`
http:
  routers: {g@file: {rule: "PathPrefix(`+"`/`"+`)", service: g@file}}
  services:
    g@file: {loadBalancer: {servers: [{url: "h2c://127.0.0.1:1"}], healthCheck: {mode: tcp}}}
`, generation.Options{})
	if st := tbl.Report().Routers["g@file"]; st.Status != "disabled" || !strings.Contains(strings.Join(st.Errors, ";"), `"tcp" is not one of http, grpc`) {
		t.Errorf("mode tcp: %+v", st)
	}
}
