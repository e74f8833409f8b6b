package observe

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/semconv/v1.37.0/httpconv"

	"github.com/gantry-proxy/gantry/config/static"
)

// DefaultOTLPBoundaries are Traefik's default metrics.otlp.explicitBoundaries
// for the request-duration histograms, in seconds.
var DefaultOTLPBoundaries = []float64{.005, .01, .025, .05, .075, .1, .25, .5, .75, 1, 2.5, 5, 7.5, 10}

// DefaultOTLPPushInterval is Traefik's default metrics.otlp.pushInterval.
const DefaultOTLPPushInterval = 10 * time.Second

// OTLPMetricsOptions configures OTLPMetrics.
type OTLPMetricsOptions struct {
	// Config is the static metrics.otlp section; nil means its defaults.
	Config *static.MetricsOTLP
	// AddInternals counts Gantry's own services (metrics.addInternals).
	AddInternals bool
	// Servers and Certificates, when set, are called at each push to fill
	// traefik_service_server_up and traefik_tls_certs_not_after. They must
	// be safe for concurrent use.
	Servers      func() []ServerUp
	Certificates func() []*x509.Certificate
	// Version is the resource's service.version.
	Version string

	exporter sdkmetric.Exporter // tests: replaces the OTLP exporter
}

// OTLPMetrics pushes Traefik v3's metrics over OTLP (HTTP or gRPC) every
// pushInterval, as Traefik's OpenTelemetry registry names them
// (pkg/observability/metrics/otel.go): the same instrument names and
// attribute names as the Prometheus families —
//
//	traefik_entrypoint_requests_total{code,method,protocol,entrypoint}     counter
//	traefik_entrypoint_requests_tls_total{tls_version,tls_cipher,entrypoint}
//	traefik_entrypoint_request_duration_seconds{code,method,protocol,entrypoint}  histogram, s
//	traefik_entrypoint_requests_bytes_total, traefik_entrypoint_responses_bytes_total
//	traefik_router_*{…,router,service}       (addRoutersLabels, default off)
//	traefik_service_*{…,service}             (addServicesLabels, default on)
//	traefik_service_retries_total{service}
//	traefik_service_server_up{service,url}   gauge, 1 up / 0 down
//	traefik_open_connections{entrypoint,protocol}  gauge
//	traefik_config_reloads_total, traefik_config_last_reload_success (unix s)
//	traefik_tls_certs_not_after{cn,serial,sans}    gauge, unix s
//
// — plus the OpenTelemetry HTTP semantic-convention histograms Traefik
// records next to them: http.server.request.duration per request on the
// entrypoint and http.client.request.duration per attempt to a server.
// Counters are cumulative with unit "1"; histograms use
// explicitBoundaries. Service metrics count attempts as the Prometheus ones
// do. Attribute values a client controls (method, Host) are bounded:
// unknown methods are "_OTHER" in the semantic-convention histograms (the
// convention's value) and EXTENSION_METHOD in traefik_*; each instrument
// keeps at most 2000 attribute sets per push (the SDK's limit; the rest is
// folded into one set with otel.metric.overflow=true).
//
// Request and Conn never block on I/O: the SDK aggregates in memory and a
// reader goroutine exports. Shutdown pushes what is left.
type OTLPMetrics struct {
	provider *sdkmetric.MeterProvider
	shutdown sync.Once
	shutErr  error

	ep, router, service, internals bool

	epF, rtF, svcF       *otelFamily
	retries              metric.Float64Counter
	reloads              metric.Float64Counter
	serverDur, clientDur metric.Float64Histogram

	lastReload atomic.Int64 // unix seconds; 0 before the first reload
	conns      sync.Map     // [2]string{entrypoint, protocol} -> *otelGauge
	cache      sync.Map     // reqKey -> *otelChildren
	tlsCache   sync.Map     // tlsKey -> *otelTLSChildren
}

type otelFamily struct {
	reqs, tls, reqBytes, respBytes metric.Float64Counter
	dur                            metric.Float64Histogram
}

type otelGauge struct {
	set metric.MeasurementOption
	v   atomic.Int64
}

// NewOTLPMetrics validates the section, builds the exporter and the meter
// provider and registers the instruments. Errors name the option:
// `metrics.otlp.pushInterval: must be positive`.
func NewOTLPMetrics(ctx context.Context, opts OTLPMetricsOptions) (*OTLPMetrics, error) {
	c := opts.Config
	if c == nil {
		c = &static.MetricsOTLP{}
	}
	interval := c.PushInterval.D()
	switch {
	case interval < 0:
		return nil, fmt.Errorf("metrics.otlp.pushInterval: %s must be positive", interval)
	case interval == 0:
		interval = DefaultOTLPPushInterval
	}
	bounds := c.ExplicitBoundaries
	if len(bounds) == 0 {
		bounds = DefaultOTLPBoundaries
	}
	for i := 1; i < len(bounds); i++ {
		if bounds[i] <= bounds[i-1] {
			return nil, fmt.Errorf("metrics.otlp.explicitBoundaries: %v is not strictly increasing", bounds)
		}
	}
	exp := opts.exporter
	if exp == nil {
		var err error
		if exp, err = newMetricExporter(ctx, c); err != nil {
			return nil, err
		}
	}
	res, err := otelResource(ctx, c.ServiceName, opts.Version, c.ResourceAttributes)
	if err != nil {
		return nil, fmt.Errorf("metrics.otlp: %w", err)
	}
	hist := sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: bounds}}
	p := sdkmetric.NewMeterProvider(
		sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(interval))),
		sdkmetric.WithView(
			sdkmetric.NewView(sdkmetric.Instrument{Name: "traefik_*_request_duration_seconds"}, hist),
			sdkmetric.NewView(sdkmetric.Instrument{Name: "http.*.request.duration"}, hist),
		),
	)
	m := &OTLPMetrics{
		provider:  p,
		ep:        c.AddEntryPointsLabels == nil || *c.AddEntryPointsLabels,
		router:    c.AddRoutersLabels,
		service:   c.AddServicesLabels == nil || *c.AddServicesLabels,
		internals: opts.AddInternals,
	}
	if err := m.register(p.Meter("github.com/gantry-proxy/gantry", metric.WithInstrumentationVersion(opts.Version)), opts); err != nil {
		_ = p.Shutdown(ctx)
		return nil, fmt.Errorf("metrics.otlp: %w", err)
	}
	return m, nil
}

func newMetricExporter(ctx context.Context, c *static.MetricsOTLP) (sdkmetric.Exporter, error) {
	t, err := resolveOTLP("metrics.otlp", c.HTTP, c.GRPC, "/v1/metrics")
	if err != nil {
		return nil, err
	}
	if t.grpc {
		exp, err := otlpmetricgrpc.New(ctx, metricGRPCOptions.of(t)...)
		if err != nil {
			return nil, fmt.Errorf("metrics.otlp.grpc: %w", err)
		}
		return exp, nil
	}
	exp, err := otlpmetrichttp.New(ctx, metricHTTPOptions.of(t)...)
	if err != nil {
		return nil, fmt.Errorf("metrics.otlp.http: %w", err)
	}
	return exp, nil
}

var (
	metricGRPCOptions = otlpGRPCOptions[otlpmetricgrpc.Option]{otlpmetricgrpc.WithEndpoint, otlpmetricgrpc.WithCompressor,
		otlpmetricgrpc.WithHeaders, otlpmetricgrpc.WithInsecure, otlpmetricgrpc.WithTLSCredentials}
	metricHTTPOptions = otlpHTTPOptions[otlpmetrichttp.Option]{otlpmetrichttp.WithEndpoint, otlpmetrichttp.WithURLPath,
		otlpmetrichttp.WithCompression(otlpmetrichttp.GzipCompression), otlpmetrichttp.WithHeaders,
		otlpmetrichttp.WithInsecure, otlpmetrichttp.WithTLSClientConfig}
)

func (m *OTLPMetrics) register(meter metric.Meter, opts OTLPMetricsOptions) error {
	var errs []error
	counter := func(name, help string) metric.Float64Counter {
		c, err := meter.Float64Counter(name, metric.WithDescription(help), metric.WithUnit("1"))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, help string) metric.Float64Histogram {
		h, err := meter.Float64Histogram(name, metric.WithDescription(help), metric.WithUnit("s"))
		errs = append(errs, err)
		return h
	}
	family := func(level, what string) *otelFamily {
		p := "traefik_" + level + "_"
		return &otelFamily{
			reqs:      counter(p+"requests_total", fmt.Sprintf(helpReqs[level], what)),
			tls:       counter(p+"requests_tls_total", helpTLS[level]),
			dur:       histogram(p+"request_duration_seconds", fmt.Sprintf(helpDur[level], what)),
			reqBytes:  counter(p+"requests_bytes_total", fmt.Sprintf(helpReqBytes[level], what)),
			respBytes: counter(p+"responses_bytes_total", fmt.Sprintf(helpRespBytes[level], what)),
		}
	}
	if m.ep {
		m.epF = family("entrypoint", "status code, protocol, and method")
	}
	if m.router {
		m.rtF = family("router", "service, status code, protocol, and method")
	}
	if m.service {
		m.svcF = family("service", "status code, protocol, and method")
		m.retries = counter("traefik_service_retries_total", "How many request retries happened on a service.")
	}
	m.reloads = counter("traefik_config_reloads_total", "Config reloads")
	sd, err := httpconv.NewServerRequestDuration(meter)
	errs = append(errs, err)
	cd, err := httpconv.NewClientRequestDuration(meter)
	errs = append(errs, err)
	m.serverDur, m.clientDur = sd.Inst(), cd.Inst()

	gauge := func(name, help, unit string, cb func(metric.Float64Observer)) {
		_, err := meter.Float64ObservableGauge(name, metric.WithDescription(help), metric.WithUnit(unit),
			metric.WithFloat64Callback(func(_ context.Context, o metric.Float64Observer) error {
				cb(o)
				return nil
			}))
		errs = append(errs, err)
	}
	gauge("traefik_config_last_reload_success", "Last config reload success", "s", func(o metric.Float64Observer) {
		if v := m.lastReload.Load(); v != 0 {
			o.Observe(float64(v))
		}
	})
	gauge("traefik_open_connections", "How many open connections exist, by entryPoint and protocol", "1", func(o metric.Float64Observer) {
		m.conns.Range(func(_, v any) bool {
			g := v.(*otelGauge)
			o.Observe(float64(g.v.Load()), g.set)
			return true
		})
	})
	if m.service && opts.Servers != nil {
		gauge("traefik_service_server_up", "service server is up, described by gauge value of 0 or 1.", "1", func(o metric.Float64Observer) {
			eachServerUp(opts.Servers(), func(s ServerUp, v float64) {
				o.Observe(v, metric.WithAttributes(attribute.String("service", s.Service), attribute.String("url", s.URL)))
			})
		})
	}
	if opts.Certificates != nil {
		gauge("traefik_tls_certs_not_after", "Certificate expiration timestamp", "s", func(o metric.Float64Observer) {
			eachCert(opts.Certificates(), func(cert *x509.Certificate, k [3]string) {
				o.Observe(float64(cert.NotAfter.Unix()), metric.WithAttributes(
					attribute.String("cn", k[0]), attribute.String("serial", k[1]), attribute.String("sans", k[2])))
			})
		})
	}
	return errors.Join(errs...)
}

// certLabels are the cn, serial and sans of traefik_tls_certs_not_after.
func certLabels(cert *x509.Certificate) [3]string {
	sans := append(append([]string{}, cert.DNSNames...), ipStrings(cert)...)
	serial := ""
	if cert.SerialNumber != nil {
		serial = cert.SerialNumber.String()
	}
	return [3]string{cert.Subject.CommonName, serial, strings.Join(sans, ",")}
}

// Shutdown pushes the metrics not yet exported and stops the exporter;
// later calls return the first call's result.
func (m *OTLPMetrics) Shutdown(ctx context.Context) error {
	m.shutdown.Do(func() {
		if err := m.provider.Shutdown(ctx); err != nil {
			m.shutErr = fmt.Errorf("metrics.otlp: shutdown: %w", err)
		}
	})
	return m.shutErr
}

// ConfigReloaded counts traefik_config_reloads_total and sets
// traefik_config_last_reload_success to at (unix seconds).
func (m *OTLPMetrics) ConfigReloaded(at time.Time) {
	m.reloads.Add(context.Background(), 1)
	m.lastReload.Store(at.Unix())
}

// otelSeries is one level's instruments bound to one attribute set.
type otelSeries struct {
	f   *otelFamily
	set metric.MeasurementOption
}

func (s *otelSeries) observe(ctx context.Context, secs, in, out float64) {
	if s == nil {
		return
	}
	s.f.reqs.Add(ctx, 1, s.set)
	s.f.dur.Record(ctx, secs, s.set)
	s.f.reqBytes.Add(ctx, in, s.set)
	s.f.respBytes.Add(ctx, out, s.set)
}

type otelChildren struct {
	ep, rt, svc *otelSeries
	retried     *otelSeries // the service's code="502" attempts
	svcSet      metric.MeasurementOption
}

func (f *otelFamily) series(kv ...string) *otelSeries {
	if f == nil {
		return nil
	}
	return &otelSeries{f: f, set: attrSet(kv...)}
}

// attrSet builds the measurement option of name/value pairs.
func attrSet(kv ...string) metric.MeasurementOption {
	attrs := make([]attribute.KeyValue, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		attrs = append(attrs, attribute.String(kv[i], kv[i+1]))
	}
	return metric.WithAttributeSet(attribute.NewSet(attrs...))
}

func (m *OTLPMetrics) children(k reqKey) *otelChildren {
	if v, ok := m.cache.Load(k); ok {
		return v.(*otelChildren)
	}
	code := strconv.Itoa(k.code)
	c := &otelChildren{}
	if m.ep && k.ep != "" {
		c.ep = m.epF.series("code", code, "method", k.method, "protocol", k.proto, "entrypoint", k.ep)
	}
	if m.router && k.router != "" {
		c.rt = m.rtF.series("code", code, "method", k.method, "protocol", k.proto, "router", k.router, "service", k.service)
	}
	if m.service && k.service != "" {
		c.svc = m.svcF.series("code", code, "method", k.method, "protocol", k.proto, "service", k.service)
		c.retried = m.svcF.series("code", strconv.Itoa(http.StatusBadGateway), "method", k.method, "protocol", k.proto, "service", k.service)
		c.svcSet = attrSet("service", k.service)
	}
	v, _ := m.cache.LoadOrStore(k, c)
	return v.(*otelChildren)
}

type otelTLSChildren struct{ ep, rt, svc *otelSeries }

func (m *OTLPMetrics) tlsChildren(k tlsKey) *otelTLSChildren {
	if v, ok := m.tlsCache.Load(k); ok {
		return v.(*otelTLSChildren)
	}
	ver, cipher := TLSVersionLabel(k.version), TLSCipherLabel(k.cipher)
	c := &otelTLSChildren{}
	if m.ep && k.ep != "" {
		c.ep = m.epF.series("tls_version", ver, "tls_cipher", cipher, "entrypoint", k.ep)
	}
	if m.router && k.router != "" {
		c.rt = m.rtF.series("tls_version", ver, "tls_cipher", cipher, "router", k.router, "service", k.service)
	}
	if m.service && k.service != "" {
		c.svc = m.svcF.series("tls_version", ver, "tls_cipher", cipher, "service", k.service)
	}
	v, _ := m.tlsCache.LoadOrStore(k, c)
	return v.(*otelTLSChildren)
}

// Request implements Observer.
func (m *OTLPMetrics) Request(ev *RequestEvent) {
	if ev.NoMetrics || (!m.internals && ev.Internal()) {
		return
	}
	ctx := context.Background()
	proto := protocolLabel(ev.Header)
	code := ev.Status
	if proto == protoGRPC || proto == protoGRPCWeb {
		code = grpcCode(ev.ResponseHeader)
	}
	c := m.children(reqKey{code: code, method: methodLabel(ev.Method), proto: proto, ep: ev.EntryPoint, router: ev.Router, service: ev.Service})
	secs := ev.Duration.Seconds()
	in, out := float64(contentLength(ev.Header)), float64(ev.BytesOut)
	c.ep.observe(ctx, secs, in, out)
	c.rt.observe(ctx, secs, in, out)
	if ev.OriginStatus != 0 && code == ev.Status && ev.Service != "" {
		// A middleware replaced the service's answer: the service's
		// series get what it answered (a service-only key).
		c = m.children(reqKey{code: ev.OriginStatus, method: methodLabel(ev.Method), proto: proto, service: ev.Service})
	}
	for _, call := range ev.Calls {
		if cc := m.children(reqKey{code: call.Status, method: methodLabel(http.MethodGet), proto: proto, service: call.Service}); cc.svc != nil {
			cc.svc.observe(ctx, call.Duration.Seconds(), 0, float64(call.Bytes))
		}
	}
	if c.svc != nil {
		c.svc.observe(ctx, secs, in, out)
		if ev.Retries > 0 {
			m.retries.Add(ctx, float64(ev.Retries), c.svcSet)
			for range ev.Retries {
				c.retried.observe(ctx, 0, 0, 0)
			}
		}
	}
	if ev.TLSVersion != 0 {
		t := m.tlsChildren(tlsKey{version: ev.TLSVersion, cipher: ev.TLSCipher, ep: ev.EntryPoint, router: ev.Router, service: ev.Service})
		for _, s := range [...]*otelSeries{t.ep, t.rt, t.svc} {
			if s != nil {
				s.f.tls.Add(ctx, 1, s.set)
			}
		}
	}
	m.serverDur.Record(ctx, secs, metric.WithAttributes(serverDurationAttrs(ev)...))
	for i := range ev.Attempts {
		a := &ev.Attempts[i]
		m.clientDur.Record(ctx, a.Duration.Seconds(), metric.WithAttributes(clientDurationAttrs(ev, a)...))
	}
}

// Conn implements Observer: traefik_open_connections, protocol labelled as
// the Prometheus gauge labels it.
func (m *OTLPMetrics) Conn(entryPoint, protocol string, delta int) {
	k := [2]string{entryPoint, protocol}
	v, ok := m.conns.Load(k)
	if !ok {
		v, _ = m.conns.LoadOrStore(k, &otelGauge{set: attrSet("entrypoint", entryPoint, "protocol", connProtocolLabel(protocol))})
	}
	v.(*otelGauge).v.Add(int64(delta))
}

// semconvMethod is http.request.method bounded as the semantic
// conventions ask: a known method, else "_OTHER".
func semconvMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

func errorType(code int) (attribute.KeyValue, bool) {
	switch {
	case code < 100 || code >= 600:
		return attribute.String("error.type", fmt.Sprintf("Invalid HTTP status code ; %d", code)), true
	case code >= 400:
		return attribute.String("error.type", strconv.Itoa(code)), true
	}
	return attribute.KeyValue{}, false
}

// serverDurationAttrs are Traefik's http.server.request.duration
// attributes (pkg/middlewares/observability/semconv.go): error.type for a
// status ≥ 400, the status, network.protocol.name/version, http.route for
// a routed request, server.address and server.port (the Host's, else the
// scheme's default), http.request.method and url.scheme (X-Forwarded-Proto).
func serverDurationAttrs(ev *RequestEvent) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 9)
	if et, ok := errorType(ev.Status); ok {
		attrs = append(attrs, et)
	}
	attrs = append(attrs,
		semconv.HTTPResponseStatusCode(ev.Status),
		semconv.NetworkProtocolName(strings.ToLower(ev.Proto)),
		semconv.NetworkProtocolVersion(protoVersion(ev.Proto)))
	if ev.Rule != "" {
		attrs = append(attrs, semconv.HTTPRoute(ev.Rule))
	}
	host, port := ev.Host, ""
	if h, p, err := net.SplitHostPort(host); err == nil {
		host, port = h, p
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host != "" {
		attrs = append(attrs, semconv.ServerAddress(host))
	}
	switch n, err := strconv.Atoi(port); {
	case ev.LocalPort > 0:
		attrs = append(attrs, semconv.ServerPort(ev.LocalPort))
	case err == nil:
		attrs = append(attrs, semconv.ServerPort(n))
	case ev.TLS:
		attrs = append(attrs, semconv.ServerPort(443))
	default:
		attrs = append(attrs, semconv.ServerPort(80))
	}
	return append(attrs,
		attribute.String("http.request.method", semconvMethod(ev.Method)),
		attribute.String("url.scheme", headerValue(ev.Header, "X-Forwarded-Proto")))
}

// clientDurationAttrs are Traefik's http.client.request.duration
// attributes for one attempt (pkg/server/service/observability): as the
// server's, with server.address the server URL's host:port and server.port.
func clientDurationAttrs(ev *RequestEvent, a *Attempt) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 8)
	if et, ok := errorType(a.Status); ok {
		attrs = append(attrs, et)
	}
	attrs = append(attrs,
		semconv.HTTPResponseStatusCode(a.Status),
		semconv.NetworkProtocolName(strings.ToLower(ev.Proto)),
		semconv.NetworkProtocolVersion(protoVersion(ev.Proto)))
	hostPort, port := "", 0
	if u, err := url.Parse(a.Upstream); err == nil {
		hostPort = u.Host
		if _, p, err := net.SplitHostPort(u.Host); err == nil {
			port, _ = strconv.Atoi(p)
		} else if u.Scheme == "https" {
			port = 443
		} else {
			port = 80
		}
	}
	return append(attrs,
		attribute.String("http.request.method", semconvMethod(ev.Method)),
		attribute.String("server.address", hostPort),
		attribute.Int("server.port", port),
		attribute.String("url.scheme", headerValue(ev.Header, "X-Forwarded-Proto")))
}
