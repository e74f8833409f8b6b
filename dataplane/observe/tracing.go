package observe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
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

// Tracing creates OpenTelemetry spans for requests and exports them over
// OTLP (HTTP or gRPC), with Traefik's span names and attributes
// (pkg/observability/tracing/tracing.go). Incoming W3C trace context
// (traceparent, tracestate, baggage) is continued; each try of the request
// on a server is a ReverseProxy span whose context the server receives. sampleRate is a
// parent-based trace-ID ratio: a sampled caller is always sampled. Create
// it with NewTracing; Shutdown flushes.
type Tracing struct {
	provider     *sdktrace.TracerProvider
	tracer       trace.Tracer
	prop         propagation.TextMapPropagator
	reqHeaders   []string // canonical
	respHeaders  []string
	safeQuery    []string
	globalAttrs  []attribute.KeyValue
	addInternals bool
	upstreams    sync.Map // server URL -> *upstream
	nUpstreams   atomic.Int32
}

// NewTracing builds the exporter and tracer provider from c. Errors name
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

// newTracing builds the tracer provider over exp (tests and benchmarks
// pass their own exporter).
func newTracing(c *static.Tracing, rate float64, exp sdktrace.SpanExporter) *Tracing {
	name := c.ServiceName
	if name == "" {
		name = DefaultTracingServiceName
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(name)}
	for _, k := range sortedKeys(c.ResourceAttributes) {
		attrs = append(attrs, attribute.String(k, c.ResourceAttributes[k]))
	}
	res := resource.NewWithAttributes(semconv.SchemaURL, attrs...)
	p := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(rate))),
	)
	t := &Tracing{
		provider:     p,
		tracer:       p.Tracer("github.com/gantry-proxy/gantry"),
		prop:         propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		safeQuery:    c.SafeQueryParams,
		addInternals: c.AddInternals,
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

func newExporter(ctx context.Context, o *static.TracingOTLP) (*otlptrace.Exporter, error) {
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
	var h *static.OTLPHTTP
	if o != nil {
		h = o.HTTP
	}
	opts := []otlptracehttp.Option{}
	if h != nil && h.Endpoint != "" {
		u, err := url.Parse(h.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("tracing.otlp.http.endpoint: %q is not an http(s) URL", h.Endpoint)
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(h.Endpoint))
	}
	if h != nil && len(h.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(h.Headers))
	}
	if h != nil && h.TLS != nil {
		tc, err := clientTLS(h.TLS)
		if err != nil {
			return nil, fmt.Errorf("tracing.otlp.http.tls: %w", err)
		}
		opts = append(opts, otlptracehttp.WithTLSClientConfig(tc))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing.otlp.http: %w", err)
	}
	return exp, nil
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
	if err := t.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: shutdown: %w", err)
	}
	return nil
}

// Trace is the spans of one request; End finishes them.
//
// Each span's attributes are collected here and set once, when it ends: a
// recording span's attribute slice grows (a copy) on every SetAttributes.
type Trace struct {
	t             *Tracing
	entry, router trace.Span
	routerCtx     context.Context // the Router span's: parent of each attempt
	client        trace.Span      // the attempt in progress; nil between attempts
	entryAttrs    []attribute.KeyValue
	clientAttrs   []attribute.KeyValue // the attempt's; the array is reused by the next
	// rawQuery and safeQuery are the request's query and its redaction,
	// computed once for the EntryPoint span and reused by each attempt.
	rawQuery, safeQuery string
}

// Start begins the spans of r, routed by router (rule, to service) on
// entryPoint: EntryPoint (server) ← Router. It returns r with their
// context; each try on a server then adds a ReverseProxy (client) span
// (Attempt). Requests to Gantry's own services are not traced unless
// tracing.addInternals (Traefik's default); Start then returns r and nil.
func (t *Tracing) Start(r *http.Request, entryPoint, router, rule, service string) (*http.Request, *Trace) {
	if !t.addInternals && (strings.HasSuffix(service, "@internal") || strings.HasSuffix(router, "@internal")) {
		return r, nil
	}
	start := time.Now()
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	tr := &Trace{t: t}
	ctx, tr.entry = t.tracer.Start(ctx, SpanEntryPoint, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
	if !tr.entry.IsRecording() {
		// Not sampled: the Router and ReverseProxy spans would not be
		// either (parent-based), so none is made; the server continues the
		// trace (flags 00) from the EntryPoint span's context.
		tr.routerCtx = ctx
		return r, tr
	}
	tr.entryAttrs = t.serverAttributes(tr, r, entryPoint)
	ctx, tr.router = t.tracer.Start(ctx, SpanRouter, trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(start))
	if tr.router.IsRecording() {
		tr.router.SetAttributes(
			attribute.String("traefik.service.name", service),
			attribute.String("traefik.router.name", router),
			semconv.HTTPRoute(rule))
	}
	tr.routerCtx = ctx
	return r.WithContext(ctx), tr
}

// StartUnrouted begins the EntryPoint span of a request no router matched
// on entryPoint (Traefik traces every request at the entrypoint, before
// routing): End finishes it with the status answered (404, or the
// entrypoint's notFound page).
func (t *Tracing) StartUnrouted(r *http.Request, entryPoint string) *Trace {
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	tr := &Trace{t: t}
	_, tr.entry = t.tracer.Start(ctx, SpanEntryPoint, trace.WithSpanKind(trace.SpanKindServer))
	if tr.entry.IsRecording() {
		tr.entryAttrs = t.serverAttributes(tr, r, entryPoint)
	}
	return tr
}

// Attempt begins the ReverseProxy (client) span of one try of r on the
// server upstream (a URL), a child of the Router span, and sets r's
// traceparent (and tracestate, baggage) to it, so the server continues the
// trace from this attempt. A retry makes a new span: each try is one, as
// each of Traefik's round trips is. AttemptDone ends it.
func (tr *Trace) Attempt(r *http.Request, upstream string) {
	if tr == nil || tr.routerCtx == nil {
		return
	}
	if tr.client != nil {
		tr.client.End()
	}
	if tr.router == nil { // not sampled: see Start
		tr.t.prop.Inject(tr.routerCtx, propagation.HeaderCarrier(r.Header))
		return
	}
	ctx, span := tr.t.tracer.Start(tr.routerCtx, SpanReverseProxy, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		tr.clientAttrs = tr.t.clientAttributes(tr, tr.clientAttrs[:0], r, upstream)
	}
	tr.t.prop.Inject(ctx, propagation.HeaderCarrier(r.Header))
	tr.client = span
}

// AttemptDone ends the attempt's span: status is the server's answer, or
// what its failure maps to (502, 504; 0: none), err the failure (nil when
// the exchange completed), h the response headers (captured ones become
// attributes).
func (tr *Trace) AttemptDone(status int, h http.Header, err error) {
	if tr == nil || tr.client == nil {
		return
	}
	if tr.client.IsRecording() {
		var code codes.Code
		var desc string
		tr.clientAttrs, code, desc = statusAttrs(tr.clientAttrs, status, trace.SpanKindClient, h, tr.t.respHeaders)
		if err != nil {
			code, desc = codes.Error, err.Error()
		}
		tr.client.SetAttributes(tr.clientAttrs...) // copied: the slice is ours again
		if code != codes.Unset {
			tr.client.SetStatus(code, desc)
		}
		clear(tr.clientAttrs)
	}
	tr.client.End()
	tr.client = nil
}

// End finishes the spans with what the request came to (the status sent,
// the response headers); it sets ev.TraceID and ev.SpanID to the
// EntryPoint span's.
func (tr *Trace) End(ev *RequestEvent) {
	if tr == nil {
		return
	}
	end := time.Now()
	t := tr.t
	if tr.client != nil { // an attempt aborted by a panic
		tr.client.End(trace.WithTimestamp(end))
		tr.client = nil
	}
	if tr.router != nil {
		tr.router.End(trace.WithTimestamp(end))
	}
	if tr.entry.IsRecording() {
		attrs, code, desc := statusAttrs(tr.entryAttrs, ev.Status, trace.SpanKindServer, ev.ResponseHeader, t.respHeaders)
		tr.entry.SetAttributes(attrs...) // copied: the slice goes back to the pool
		if code != codes.Unset {
			tr.entry.SetStatus(code, desc)
		}
		putAttrs(attrs)
	}
	putAttrs(tr.clientAttrs)
	tr.entryAttrs, tr.clientAttrs = nil, nil
	tr.entry.End(trace.WithTimestamp(end))
	if sc := tr.entry.SpanContext(); sc.IsValid() {
		ev.TraceID, ev.SpanID = sc.TraceID(), sc.SpanID()
	}
}

func protoVersion(p string) string {
	switch p {
	case "HTTP/1.0":
		return "1.0"
	case "HTTP/1.1":
		return "1.1"
	case "HTTP/2", "HTTP/2.0":
		return "2"
	case "HTTP/3", "HTTP/3.0":
		return "3"
	}
	return p
}

// serverAttributes are Traefik's CaptureServerRequest attributes (plus
// entry_point and the global attributes), with room for the response's.
// It records the request's query and its redaction in tr.
func (t *Tracing) serverAttributes(tr *Trace, r *http.Request, entryPoint string) []attribute.KeyValue {
	attrs := getAttrs(16 + len(t.globalAttrs) + len(t.reqHeaders) + 1 + len(t.respHeaders))
	attrs = append(attrs, attribute.String("entry_point", entryPoint))
	attrs = append(attrs, t.globalAttrs...)
	tr.rawQuery = r.URL.RawQuery
	if tr.rawQuery != "" {
		tr.safeQuery = t.safeRawQuery(tr.rawQuery)
	}
	attrs = append(attrs,
		semconv.HTTPRequestMethodKey.String(r.Method),
		semconv.NetworkProtocolVersion(protoVersion(r.Proto)),
		semconv.HTTPRequestBodySize(int(r.ContentLength)),
		semconv.URLPath(r.URL.Path),
		semconv.URLQuery(tr.safeQuery),
		semconv.URLScheme(headerValue(r.Header, "X-Forwarded-Proto")),
		semconv.UserAgentOriginal(headerValue(r.Header, "User-Agent")),
		semconv.ServerAddress(r.Host),
	)
	host, port, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	client := host
	if xff := headerValue(r.Header, "X-Forwarded-For"); xff != "" {
		if ip, _, _ := strings.Cut(xff, ","); strings.TrimSpace(ip) != "" {
			client = strings.TrimSpace(ip)
		}
	}
	attrs = append(attrs, semconv.NetworkPeerAddress(host), semconv.ClientAddress(client))
	if err == nil {
		p, _ := strconv.Atoi(port)
		attrs = append(attrs, semconv.ClientPort(p), semconv.NetworkPeerPort(p))
	}
	return appendHeaders(attrs, "http.request.header.", r.Header, t.reqHeaders)
}

// upstream is a server URL split once for the client spans: its redacted
// scheme://host prefix and its host and port.
type upstream struct {
	prefix, scheme, host string
	port                 int
}

// maxUpstreams bounds the server URLs whose split is kept.
const maxUpstreams = 4096

func (t *Tracing) upstream(raw string) (*upstream, bool) {
	if v, ok := t.upstreams.Load(raw); ok {
		return v.(*upstream), true
	}
	su, err := url.Parse(raw)
	if raw == "" || err != nil {
		return nil, false
	}
	host, port, err := net.SplitHostPort(su.Host)
	if err != nil {
		host, port = su.Host, "80"
		if su.Scheme == "https" {
			port = "443"
		}
	}
	p, _ := strconv.Atoi(port)
	base := url.URL{Scheme: su.Scheme, Host: su.Host}
	if su.User != nil {
		base.User = url.UserPassword(Redacted, Redacted)
	}
	u := &upstream{prefix: base.String(), scheme: su.Scheme, host: host, port: p}
	if t.nUpstreams.Load() < maxUpstreams {
		if _, loaded := t.upstreams.LoadOrStore(raw, u); !loaded {
			t.nUpstreams.Add(1)
		}
	}
	return u, true
}

// clientAttributes appends to attrs Traefik's CaptureClientRequest
// attributes for one call of r to the server upstream, with room for the
// response's.
func (t *Tracing) clientAttributes(tr *Trace, attrs []attribute.KeyValue, r *http.Request, upstream string) []attribute.KeyValue {
	if need := 12 + len(t.reqHeaders) + 1 + len(t.respHeaders); cap(attrs) < need {
		putAttrs(attrs)
		attrs = getAttrs(need)
	}
	attrs = append(attrs,
		semconv.HTTPRequestMethodKey.String(r.Method),
		semconv.NetworkProtocolVersion(protoVersion(r.Proto)),
		semconv.UserAgentOriginal(headerValue(r.Header, "User-Agent")),
	)
	u, ok := t.upstream(upstream)
	if !ok {
		return attrs
	}
	query := r.URL.RawQuery
	switch {
	case query == "":
	case query == tr.rawQuery && tr.rawQuery != "":
		query = tr.safeQuery
	default:
		query = t.safeRawQuery(query)
	}
	full := u.prefix + r.URL.EscapedPath()
	if query != "" {
		full += "?" + query
	}
	attrs = append(attrs, semconv.URLFull(full), semconv.URLScheme(u.scheme),
		semconv.NetworkPeerAddress(u.host), semconv.NetworkPeerPort(u.port), semconv.ServerAddress(u.host), semconv.ServerPort(u.port))
	return appendHeaders(attrs, "http.request.header.", r.Header, t.reqHeaders)
}

func appendHeaders(attrs []attribute.KeyValue, prefix string, h http.Header, names []string) []attribute.KeyValue {
	for _, name := range names {
		if strings.EqualFold(name, "User-Agent") {
			continue // already user_agent.original
		}
		if v := h[name]; v != nil {
			attrs = append(attrs, attribute.StringSlice(prefix+strings.ToLower(name), v))
		}
	}
	return attrs
}

// statusAttrs is Traefik's CaptureResponse: it appends
// http.response.status_code (when known) and the captured response headers
// to attrs, and returns the span status: an error for 5xx on every span,
// for 4xx too on the client span.
func statusAttrs(attrs []attribute.KeyValue, code int, kind trace.SpanKind, h http.Header, captured []string) ([]attribute.KeyValue, codes.Code, string) {
	status, desc := codes.Unset, ""
	switch {
	case code == 0:
	case code < 100 || code >= 600:
		status, desc = codes.Error, fmt.Sprintf("Invalid HTTP status code %d", code)
	case code >= 500, kind == trace.SpanKindClient && code >= 400:
		status = codes.Error
	}
	if code > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(code))
	}
	return appendHeaders(attrs, "http.response.header.", h, captured), status, desc
}

// safeRawQuery redacts every query value not listed in
// tracing.safeQueryParams, as Traefik does (the result is re-encoded with
// sorted keys, as url.Values encodes it).
func (t *Tracing) safeRawQuery(raw string) string {
	q, _ := url.ParseQuery(raw)
	for k := range q {
		if !slices.Contains(t.safeQuery, k) {
			q.Set(k, Redacted)
		}
	}
	return q.Encode()
}

// attrPool recycles the attribute slices spans are built in: a recording
// span copies what SetAttributes gives it.
var attrPool = sync.Pool{New: func() any { s := make([]attribute.KeyValue, 0, 32); return &s }}

func getAttrs(n int) []attribute.KeyValue {
	s := *(attrPool.Get().(*[]attribute.KeyValue))
	if cap(s) < n {
		return make([]attribute.KeyValue, 0, n)
	}
	return s[:0]
}

func putAttrs(s []attribute.KeyValue) {
	if s == nil || cap(s) > 256 {
		return
	}
	clear(s[:cap(s)])
	s = s[:0]
	attrPool.Put(&s)
}
