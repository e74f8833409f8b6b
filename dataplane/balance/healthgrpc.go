package balance

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// checkGRPC runs one check of healthCheck.mode grpc: the gRPC Health
// Checking Protocol v1 (grpc.health.v1.Health/Check with an empty service
// name, i.e. the server as a whole) over a fresh connection; healthy means
// SERVING. The connection is plaintext HTTP/2 for http and h2c and TLS
// with the serversTransport's settings for https, the scheme being
// healthCheck.scheme or else the server's; healthCheck.port replaces the
// port. Deliberate differences from Traefik (pkg/healthcheck,
// checkHealthGRPC): an https server is checked over TLS (Traefik dials it
// without transport credentials and the check can never pass), hostname
// is sent as the :authority, and headers as request metadata. path,
// method, status and followRedirects do not apply to gRPC.
// Source: https://github.com/grpc/grpc/blob/master/doc/health-checking.md
func (c *Checker) checkGRPC(ctx context.Context) error {
	addr := c.spec.url.Host
	var creds credentials.TransportCredentials
	if c.spec.url.Scheme == "https" {
		creds = credentials.NewTLS(c.grpcTLS())
	} else {
		creds = insecure.NewCredentials()
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if c.spec.hostname != "" {
		opts = append(opts, grpc.WithAuthority(c.spec.hostname))
	}
	conn, err := grpc.NewClient("passthrough:///"+addr, opts...)
	if err != nil {
		return fmt.Errorf("gRPC health check %s: %w", addr, err)
	}
	defer func() { _ = conn.Close() }()
	if len(c.spec.headers) > 0 {
		md := metadata.MD{}
		for k, v := range c.spec.headers {
			md.Set(k, v)
		}
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(false))
	if err != nil {
		switch status.Code(err) {
		case codes.Unimplemented:
			return fmt.Errorf("gRPC health check %s: the server does not implement grpc.health.v1: %w", addr, err)
		case codes.DeadlineExceeded:
			return fmt.Errorf("gRPC health check %s: timeout after %s", addr, c.spec.timeout)
		case codes.Canceled:
			return context.Canceled
		}
		return fmt.Errorf("gRPC health check %s: %w", addr, err)
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("gRPC health check %s: status %s, want SERVING", addr, s)
	}
	return nil
}

// grpcTLS is the TLS configuration of the check's transport for h2.
func (c *Checker) grpcTLS() *tls.Config {
	var tc *tls.Config
	if t, ok := c.client.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
		tc = t.TLSClientConfig.Clone()
	} else {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tc.NextProtos = []string{"h2"}
	return tc
}
