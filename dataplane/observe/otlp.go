package observe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding/gzip"

	"github.com/gantry-proxy/gantry/config/static"
)

// otlpTarget is where an OTLP exporter sends, resolved from a Traefik-style
// http/grpc section (types.OTelHTTP / types.OTelGRPC in Traefik v3).
type otlpTarget struct {
	grpc     bool
	endpoint string // host:port
	path     string // HTTP only: the URL path
	insecure bool   // HTTP: the scheme is http; gRPC: grpc.insecure
	headers  map[string]string
	tls      *tls.Config // nil: the system's roots
}

// resolveOTLP validates the transport of section (e.g. "metrics.otlp"):
// HTTP's endpoint is a URL (default https://localhost:4318), its path
// defaultPath when empty ("/v1/metrics", "/v1/logs"), as Traefik builds
// it; gRPC's is host:port (default localhost:4317). Errors name the option.
func resolveOTLP(section string, h *static.OTLPHTTP, g *static.OTLPGRPC, defaultPath string) (*otlpTarget, error) {
	if h != nil && g != nil {
		return nil, fmt.Errorf("%s: set http or grpc, not both", section)
	}
	if g != nil {
		t := &otlpTarget{grpc: true, endpoint: g.Endpoint, insecure: g.Insecure, headers: g.Headers}
		if t.endpoint == "" {
			t.endpoint = "localhost:4317"
		}
		if _, _, err := net.SplitHostPort(t.endpoint); err != nil {
			return nil, fmt.Errorf("%s.grpc.endpoint: %q is not host:port", section, t.endpoint)
		}
		if g.TLS != nil && !g.Insecure {
			tc, err := clientTLS(g.TLS)
			if err != nil {
				return nil, fmt.Errorf("%s.grpc.tls: %w", section, err)
			}
			t.tls = tc
		}
		return t, nil
	}
	endpoint := "https://localhost:4318"
	t := &otlpTarget{}
	if h != nil {
		if h.Endpoint != "" {
			endpoint = h.Endpoint
		}
		t.headers = h.Headers
		if h.TLS != nil {
			tc, err := clientTLS(h.TLS)
			if err != nil {
				return nil, fmt.Errorf("%s.http.tls: %w", section, err)
			}
			t.tls = tc
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%s.http.endpoint: %q is not an http(s) URL", section, endpoint)
	}
	t.endpoint, t.path, t.insecure = u.Host, u.Path, u.Scheme == "http"
	if t.path == "" {
		t.path = defaultPath
	}
	return t, nil
}

// otelResource is the resource of Gantry's OTLP signals, as Traefik builds
// it: the SDK's own attributes and the host, then service.name and
// service.version, then resourceAttributes, then OTEL_RESOURCE_ATTRIBUTES
// and OTEL_SERVICE_NAME (the environment wins, as in Traefik).
func otelResource(ctx context.Context, serviceName, version string, attrs map[string]string) (*resource.Resource, error) {
	if serviceName == "" {
		serviceName = DefaultTracingServiceName
	}
	base := []attribute.KeyValue{semconv.ServiceName(serviceName)}
	if version != "" {
		base = append(base, semconv.ServiceVersion(version))
	}
	extra := make([]attribute.KeyValue, 0, len(attrs))
	for _, k := range sortedKeys(attrs) {
		extra = append(extra, attribute.String(k, attrs[k]))
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithAttributes(base...),
		resource.WithAttributes(extra...),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("resource: %w", err)
	}
	return res, nil
}

// otlpGRPCOptions are one OTLP gRPC exporter package's option constructors
// (otlpmetricgrpc.WithEndpoint, otlploggrpc.WithEndpoint, ...), so one
// function turns an otlpTarget into the options of either signal.
type otlpGRPCOptions[O any] struct {
	endpoint    func(string) O
	compressor  func(string) O
	headers     func(map[string]string) O
	insecure    func() O
	credentials func(credentials.TransportCredentials) O
}

// of returns the options for t: its endpoint, gzip, its headers, and
// either plaintext (grpc.insecure) or its TLS client configuration.
func (f otlpGRPCOptions[O]) of(t *otlpTarget) []O {
	opts := []O{f.endpoint(t.endpoint), f.compressor(gzip.Name)}
	if len(t.headers) > 0 {
		opts = append(opts, f.headers(t.headers))
	}
	switch {
	case t.insecure:
		opts = append(opts, f.insecure())
	case t.tls != nil:
		opts = append(opts, f.credentials(credentials.NewTLS(t.tls)))
	}
	return opts
}

// otlpHTTPOptions are one OTLP HTTP exporter package's option constructors
// (otlpmetrichttp.WithEndpoint, otlploghttp.WithEndpoint, ...); gzip is
// its WithCompression(GzipCompression).
type otlpHTTPOptions[O any] struct {
	endpoint func(string) O
	urlPath  func(string) O
	gzip     O
	headers  func(map[string]string) O
	insecure func() O
	tls      func(*tls.Config) O
}

// of returns the options for t: host:port, path, gzip, its headers,
// plain http when the endpoint's scheme is http, its TLS configuration.
func (f otlpHTTPOptions[O]) of(t *otlpTarget) []O {
	opts := []O{f.endpoint(t.endpoint), f.urlPath(t.path), f.gzip}
	if len(t.headers) > 0 {
		opts = append(opts, f.headers(t.headers))
	}
	if t.insecure {
		opts = append(opts, f.insecure())
	}
	if t.tls != nil {
		opts = append(opts, f.tls(t.tls))
	}
	return opts
}
