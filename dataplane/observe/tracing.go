package observe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"google.golang.org/grpc/credentials"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
)

// DefaultTracingServiceName is service.name when tracing.serviceName is
// empty (Traefik's default is "traefik").
const DefaultTracingServiceName = "gantry"

// Span names, as Traefik v3 names them with its default (minimal) trace
// verbosity (pkg/middlewares/observability, pkg/server/service): the
// server span of the request, the router it went through, and the client
// span of the call to the server, whose context the server receives in
// traceparent.
const (
	SpanEntryPoint   = "EntryPoint"
	SpanRouter       = "Router"
	SpanReverseProxy = "ReverseProxy"
)

// Tracing records OpenTelemetry spans for requests in Gantry's own span
// structures (span: no SDK tracer, its per-span locking, attribute map
// de-duplication and snapshot copy) and exports them in batches
// (spanBatcher, the SDK batch span processor's OTEL_BSP_* semantics) over
// OTLP (HTTP: Gantry's own encoding; gRPC: the OpenTelemetry exporter, fed
// the same spans as sdktrace.ReadOnlySpan), with Traefik's span names and attributes
// (pkg/observability/tracing/tracing.go). Incoming W3C trace context
// (traceparent, tracestate, baggage) is continued; each try of the request
// on a server is a ReverseProxy span whose context the server receives. sampleRate is a
// parent-based trace-ID ratio: a sampled caller is always sampled. Create
// it with NewTracing; Shutdown flushes.
type Tracing struct {
	batch       *spanBatcher
	res         *resource.Resource
	scope       instrumentation.Scope
	limits      spanLimits
	mayRepeat   bool     // an attribute key may be set twice on a span (global attributes, captured headers)
	direct      bool     // spans encode their attributes as they are set (span.direct): own exporter, !mayRepeat
	reqHeaders  []string // canonical
	respHeaders []string
	safeQuery   []string
	// queryLimitSet: GODEBUG sets urlmaxqueryparams, which url.ParseQuery
	// obeys (safeRawQuery then always uses it).
	queryLimitSet bool
	globalAttrs   []attribute.KeyValue
	addInternals  bool
	rate          float64 // tracing.sampleRate: probability a new trace is sampled
	// upstreams are server URLs split once (at most maxUpstreams): a
	// map under a read lock, as a sync.Map's interface keys cost a type
	// hash per lookup.
	upstreamsMu sync.RWMutex
	upstreams   map[string]*upstream
}

// NewTracing builds the exporter and the span batcher from c. Errors name
// the option: `tracing.sampleRate: 2 is not between 0 and 1`.
func NewTracing(ctx context.Context, c *static.Tracing) (*Tracing, error) {
	if c == nil {
		c = &static.Tracing{}
	}
	rate := 1.0
	if c.SampleRate != nil {
		rate = *c.SampleRate
	}
	if rate < 0 || rate > 1 {
		return nil, fmt.Errorf("tracing.sampleRate: %v is not between 0 and 1", rate)
	}
	exp, err := newExporter(ctx, c.OTLP)
	if err != nil {
		return nil, err
	}
	return newTracing(c, rate, exp), nil
}

// newTracing records spans in Gantry's own structures (span) and exports
// them through a batcher with the SDK's OTEL_BSP_* semantics to exp
// (tests and benchmarks pass their own exporter).
func newTracing(c *static.Tracing, rate float64, exp sdktrace.SpanExporter) *Tracing {
	name := c.ServiceName
	if name == "" {
		name = DefaultTracingServiceName
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(name)}
	for _, k := range sortedKeys(c.ResourceAttributes) {
		attrs = append(attrs, attribute.String(k, c.ResourceAttributes[k]))
	}
	t := &Tracing{
		batch:         newSpanBatcher(exp, bspConfigFromEnv()),
		res:           resource.NewWithAttributes(semconv.SchemaURL, attrs...),
		scope:         instrumentation.Scope{Name: "github.com/gantry-proxy/gantry"},
		limits:        spanLimitsFromEnv(),
		safeQuery:     c.SafeQueryParams,
		queryLimitSet: strings.Contains(os.Getenv("GODEBUG"), "urlmaxqueryparams"),
		addInternals:  c.AddInternals,
		rate:          rate,
	}
	for _, h := range c.CapturedRequestHeaders {
		t.reqHeaders = append(t.reqHeaders, http.CanonicalHeaderKey(h))
	}
	for _, h := range c.CapturedResponseHeaders {
		t.respHeaders = append(t.respHeaders, http.CanonicalHeaderKey(h))
	}
	for _, k := range sortedKeys(c.GlobalAttributes) {
		t.globalAttrs = append(t.globalAttrs, attribute.String(k, c.GlobalAttributes[k]))
	}
	t.mayRepeat = len(t.globalAttrs)+len(t.reqHeaders)+len(t.respHeaders) > 0
	t.direct = t.batch.free != nil && !t.mayRepeat
	return t
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// newExporter is the span exporter of tracing.otlp: Gantry's own
// OTLP/HTTP encoding and client (the default, https://localhost:4318/v1/traces),
// or the OpenTelemetry gRPC exporter.
func newExporter(ctx context.Context, o *static.TracingOTLP) (sdktrace.SpanExporter, error) {
	if o != nil && o.HTTP != nil && o.GRPC != nil {
		return nil, errors.New("tracing.otlp: set http or grpc, not both")
	}
	if o != nil && o.GRPC != nil {
		g := o.GRPC
		opts := []otlptracegrpc.Option{}
		if g.Endpoint != "" {
			if _, _, err := net.SplitHostPort(g.Endpoint); err != nil {
				return nil, fmt.Errorf("tracing.otlp.grpc.endpoint: %q is not host:port", g.Endpoint)
			}
			opts = append(opts, otlptracegrpc.WithEndpoint(g.Endpoint))
		}
		if len(g.Headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(g.Headers))
		}
		switch {
		case g.Insecure:
			opts = append(opts, otlptracegrpc.WithInsecure())
		case g.TLS != nil:
			tc, err := clientTLS(g.TLS)
			if err != nil {
				return nil, fmt.Errorf("tracing.otlp.grpc.tls: %w", err)
			}
			opts = append(opts, otlptracegrpc.WithTLSCredentials(credentials.NewTLS(tc)))
		}
		exp, err := otlptracegrpc.New(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("tracing.otlp.grpc: %w", err)
		}
		return exp, nil
	}
	env, err := osTraceEnv()
	if err != nil {
		slog.Warn("tracing: OpenTelemetry exporter variable ignored", "error", err)
	}
	var h *static.OTLPHTTP
	if o != nil {
		h = o.HTTP
	}
	return newOTLPHTTPTraces(h, env)
}

// clientTLS builds a client TLS configuration from files (ca, cert, key).
func clientTLS(c *config.ClientTLS) (*tls.Config, error) {
	tc := &tls.Config{InsecureSkipVerify: c.InsecureSkipVerify} //nolint:gosec // the operator's explicit choice
	if c.CA != "" {
		pem, err := os.ReadFile(c.CA)
		if err != nil {
			return nil, fmt.Errorf("ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca: %s holds no PEM certificate", c.CA)
		}
		tc.RootCAs = pool
	}
	if c.Cert != "" || c.Key != "" {
		cert, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, fmt.Errorf("cert/key: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// Shutdown exports the spans still queued and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if err := t.batch.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: shutdown: %w", err)
	}
	return nil
}
