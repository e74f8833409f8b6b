package observe

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
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
	tlsCache   sync.Map     // tlsKey -> *tlsSeries[*otelSeries]
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
