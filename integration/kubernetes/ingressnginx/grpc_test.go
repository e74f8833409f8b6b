package ingressnginx

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// backend-protocol: GRPC sends the Ingress's requests to its backend
// over h2c: a gRPC call through the web entrypoint reaches a plaintext
// gRPC server (HTTP/1.1 to it would fail).
func TestBackendProtocolGRPC(t *testing.T) {
	c := startCluster(t, "")
	ns := c.k.Namespace(t, "grpc")
	ip := harness.PodIP(t, 6)
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(l) })
	t.Cleanup(func() { srv.Stop(); wg.Wait() })
	port := l.Addr().(*net.TCPAddr).Port
	c.k.WriteService(t, ns, "grpc", nil, harness.ServicePort{Name: "http", Port: 80, TargetPort: strconv.Itoa(port)})
	c.k.SetEndpoints(t, ns, "grpc", "grpc-1", []harness.SlicePort{{Name: "http", Port: int32(port)}}, harness.ReadyEndpoint(ip))
	c.ingress(t, ns, "g", "grpc.test", "/", "Prefix", "grpc", "", "backend-protocol", "GRPC")

	conn, err := grpc.NewClient(c.g.EntryPoints["web"], grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority("grpc.test"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	harness.Try(t, routeTimeout, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			return err
		}
		if r.Status != healthpb.HealthCheckResponse_SERVING {
			return errStatus(r.Status.String())
		}
		return nil
	})
}

type errStatus string

func (e errStatus) Error() string { return "health status " + string(e) }
