package observe

import (
	"crypto/x509"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gantry-proxy/gantry/config/static"
)

// DefaultBuckets are Traefik's default request-duration histogram buckets,
// in seconds (https://doc.traefik.io/traefik/observability/metrics/prometheus/).
var DefaultBuckets = []float64{0.1, 0.3, 1.2, 5.0}

// ServerUp is the health of one server of one service, as the pool sees it.
type ServerUp struct {
	Service string // qualified, "api@docker"
	URL     string
	Up      bool
}

// MetricsOptions configures Metrics. The zero value gives Traefik's defaults
// (entrypoint and service labels on, router labels off).
type MetricsOptions struct {
	// Prometheus is the static metrics.prometheus section; nil means defaults.
	Prometheus *static.Prometheus
	// Servers, when set, is called at each scrape to fill
	// traefik_service_server_up. It must be safe for concurrent use.
	Servers func() []ServerUp
	// Certificates, when set, is called at each scrape to fill
	// traefik_tls_certs_not_after. It must be safe for concurrent use.
	Certificates func() []*x509.Certificate
	// Runtime adds the Go runtime and process collectors (go_*, process_*).
	Runtime bool
}

// Metrics exports Traefik's Prometheus metrics
// (https://doc.traefik.io/traefik/observability/metrics/overview/):
//
//	traefik_entrypoint_requests_total{code,method,protocol,entrypoint}
//	traefik_entrypoint_request_duration_seconds{code,method,protocol,entrypoint}
//	traefik_entrypoint_responses_bytes_total{code,method,protocol,entrypoint}
//	traefik_router_requests_total{code,method,protocol,router,service}
//	traefik_router_request_duration_seconds{code,method,protocol,router,service}
//	traefik_router_responses_bytes_total{code,method,protocol,router,service}
//	traefik_service_requests_total{code,method,protocol,service}
//	traefik_service_request_duration_seconds{code,method,protocol,service}
//	traefik_service_responses_bytes_total{code,method,protocol,service}
//	traefik_service_retries_total{service}
//	traefik_service_server_up{service,url}            (1 up, 0 down)
//	traefik_open_connections{entrypoint,protocol}
//	traefik_config_reloads_total
//	traefik_config_last_reload_success                (unix seconds)
//	traefik_tls_certs_not_after{cn,serial,sans}       (unix seconds)
//
// Durations are in seconds, sizes in bytes. Metrics is an Observer; its
// methods are safe for concurrent use and never block on I/O.
type Metrics struct {
	reg *prometheus.Registry

	ep, router, service bool

	epReqs, epDur, epBytes         *metricSet
	routerReqs, routerDur, rtBytes *metricSet
	svcReqs, svcDur, svcBytes      *metricSet
	retries                        *prometheus.CounterVec
	openConns                      *prometheus.GaugeVec
	reloads                        prometheus.Counter
	lastReload                     prometheus.Gauge

	cache sync.Map // reqKey -> *children
}

type metricSet struct {
	counter *prometheus.CounterVec
	hist    *prometheus.HistogramVec
}

// NewMetrics registers every collector in a fresh registry.
func NewMetrics(opts MetricsOptions) *Metrics {
	p := opts.Prometheus
	if p == nil {
		p = &static.Prometheus{}
	}
	buckets := p.Buckets
	if len(buckets) == 0 {
		buckets = DefaultBuckets
	}
	m := &Metrics{
		reg:     prometheus.NewRegistry(),
		ep:      p.AddEntryPointsLabels == nil || *p.AddEntryPointsLabels,
		router:  p.AddRoutersLabels,
		service: p.AddServicesLabels == nil || *p.AddServicesLabels,
	}
	epL := []string{"code", "method", "protocol", "entrypoint"}
	rtL := []string{"code", "method", "protocol", "router", "service"}
	svL := []string{"code", "method", "protocol", "service"}
	counter := func(name, help string, labels []string) *metricSet {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "traefik", Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return &metricSet{counter: c}
	}
	hist := func(name, help string, labels []string) *metricSet {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "traefik", Name: name, Help: help, Buckets: buckets}, labels)
		m.reg.MustRegister(h)
		return &metricSet{hist: h}
	}
	if m.ep {
		m.epReqs = counter("entrypoint_requests_total", "How many HTTP requests processed on an entrypoint, partitioned by status code, protocol, and method.", epL)
		m.epDur = hist("entrypoint_request_duration_seconds", "How long it took to process the request on an entrypoint, partitioned by status code, protocol, and method.", epL)
		m.epBytes = counter("entrypoint_responses_bytes_total", "The total size of responses in bytes handled by an entrypoint, partitioned by status code, protocol, and method.", epL)
	}
	if m.router {
		m.routerReqs = counter("router_requests_total", "How many HTTP requests are processed on a router, partitioned by service, status code, protocol, and method.", rtL)
		m.routerDur = hist("router_request_duration_seconds", "How long it took to process the request on a router, partitioned by service, status code, protocol, and method.", rtL)
		m.rtBytes = counter("router_responses_bytes_total", "The total size of responses in bytes handled by a router, partitioned by service, status code, protocol, and method.", rtL)
	}
	if m.service {
		m.svcReqs = counter("service_requests_total", "How many HTTP requests processed on a service, partitioned by status code, protocol, and method.", svL)
		m.svcDur = hist("service_request_duration_seconds", "How long it took to process the request on a service, partitioned by status code, protocol, and method.", svL)
		m.svcBytes = counter("service_responses_bytes_total", "The total size of responses in bytes returned by a service, partitioned by status code, protocol, and method.", svL)
		m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "traefik", Name: "service_retries_total", Help: "How many request retries happened on a service."}, []string{"service"})
		m.reg.MustRegister(m.retries)
	}
	m.openConns = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "traefik", Name: "open_connections", Help: "How many open connections exist, by entryPoint and protocol."}, []string{"entrypoint", "protocol"})
	m.reloads = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "traefik", Name: "config_reloads_total", Help: "Config reloads."})
	m.lastReload = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "traefik", Name: "config_last_reload_success", Help: "Last config reload success (unix seconds)."})
	m.reg.MustRegister(m.openConns, m.reloads, m.lastReload)
	if opts.Servers != nil {
		m.reg.MustRegister(&serverUpCollector{list: opts.Servers})
	}
	if opts.Certificates != nil {
		m.reg.MustRegister(&certCollector{list: opts.Certificates})
	}
	if opts.Runtime {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return m
}

// Registry returns the registry holding Gantry's collectors, for callers
// that add their own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text exposition format; it
// is what prometheus@internal serves at /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ConfigReloaded records a successful configuration apply at at: it counts
// traefik_config_reloads_total and sets traefik_config_last_reload_success.
func (m *Metrics) ConfigReloaded(at time.Time) {
	m.reloads.Inc()
	m.lastReload.Set(float64(at.UnixNano()) / 1e9)
}

// reqKey is one combination of request labels.
type reqKey struct {
	code                               int
	method, proto, ep, router, service string
}

// children are the metric children of one reqKey, resolved once: after the
// first request with given labels, Request does one sync.Map lookup and
// atomic updates, without hashing labels or locking the vectors.
type children struct {
	epReqs, epBytes, rtReqs, rtBytes, svcReqs, svcBytes, retries prometheus.Counter
	epDur, rtDur, svcDur                                         prometheus.Observer
}

func (m *Metrics) children(k reqKey) *children {
	if v, ok := m.cache.Load(k); ok {
		return v.(*children)
	}
	code := strconv.Itoa(k.code)
	c := &children{}
	if m.ep {
		c.epReqs = m.epReqs.counter.WithLabelValues(code, k.method, k.proto, k.ep)
		c.epDur = m.epDur.hist.WithLabelValues(code, k.method, k.proto, k.ep)
		c.epBytes = m.epBytes.counter.WithLabelValues(code, k.method, k.proto, k.ep)
	}
	if m.router && k.router != "" {
		c.rtReqs = m.routerReqs.counter.WithLabelValues(code, k.method, k.proto, k.router, k.service)
		c.rtDur = m.routerDur.hist.WithLabelValues(code, k.method, k.proto, k.router, k.service)
		c.rtBytes = m.rtBytes.counter.WithLabelValues(code, k.method, k.proto, k.router, k.service)
	}
	if m.service && k.service != "" {
		c.svcReqs = m.svcReqs.counter.WithLabelValues(code, k.method, k.proto, k.service)
		c.svcDur = m.svcDur.hist.WithLabelValues(code, k.method, k.proto, k.service)
		c.svcBytes = m.svcBytes.counter.WithLabelValues(code, k.method, k.proto, k.service)
		c.retries = m.retries.WithLabelValues(k.service)
	}
	v, _ := m.cache.LoadOrStore(k, c)
	return v.(*children)
}

// Request implements Observer.
func (m *Metrics) Request(ev *RequestEvent) {
	c := m.children(reqKey{code: ev.Status, method: methodLabel(ev.Method), proto: protocolLabel(ev.Header), ep: ev.EntryPoint, router: ev.Router, service: ev.Service})
	secs := ev.Duration.Seconds()
	bytes := float64(ev.BytesOut)
	if c.epReqs != nil {
		c.epReqs.Inc()
		c.epDur.Observe(secs)
		c.epBytes.Add(bytes)
	}
	if c.rtReqs != nil {
		c.rtReqs.Inc()
		c.rtDur.Observe(secs)
		c.rtBytes.Add(bytes)
	}
	if c.svcReqs != nil {
		c.svcReqs.Inc()
		c.svcDur.Observe(secs)
		c.svcBytes.Add(bytes)
		if ev.Retries > 0 {
			c.retries.Add(float64(ev.Retries))
		}
	}
}

// Conn implements Observer: it moves traefik_open_connections.
func (m *Metrics) Conn(entryPoint, protocol string, delta int) {
	m.openConns.WithLabelValues(entryPoint, protocol).Add(float64(delta))
}

// methodLabel bounds the method label's cardinality: standard methods pass,
// anything else is "EXTENSION_METHOD".
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "EXTENSION_METHOD"
}

// protocolLabel is Traefik's protocol label: "websocket" for upgrades,
// "sse" for event streams, "http" otherwise.
func protocolLabel(h http.Header) string {
	if h == nil {
		return "http"
	}
	if strings.EqualFold(h.Get("Upgrade"), "websocket") {
		return "websocket"
	}
	if strings.Contains(h.Get("Accept"), "text/event-stream") {
		return "sse"
	}
	return "http"
}

var serverUpDesc = prometheus.NewDesc("traefik_service_server_up", "service server is up, described by gauge value of 0 or 1.", []string{"service", "url"}, nil)

type serverUpCollector struct{ list func() []ServerUp }

func (c *serverUpCollector) Describe(ch chan<- *prometheus.Desc) { ch <- serverUpDesc }

func (c *serverUpCollector) Collect(ch chan<- prometheus.Metric) {
	seen := map[[2]string]bool{}
	for _, s := range c.list() {
		k := [2]string{s.Service, s.URL}
		if seen[k] {
			continue
		}
		seen[k] = true
		v := 0.0
		if s.Up {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(serverUpDesc, prometheus.GaugeValue, v, s.Service, s.URL)
	}
}

var certDesc = prometheus.NewDesc("traefik_tls_certs_not_after", "Certificate expiration timestamp (unix seconds).", []string{"cn", "serial", "sans"}, nil)

type certCollector struct{ list func() []*x509.Certificate }

func (c *certCollector) Describe(ch chan<- *prometheus.Desc) { ch <- certDesc }

func (c *certCollector) Collect(ch chan<- prometheus.Metric) {
	seen := map[[3]string]bool{}
	for _, cert := range c.list() {
		if cert == nil {
			continue
		}
		sans := append(append([]string{}, cert.DNSNames...), ipStrings(cert)...)
		serial := ""
		if cert.SerialNumber != nil {
			serial = cert.SerialNumber.String()
		}
		k := [3]string{cert.Subject.CommonName, serial, strings.Join(sans, ",")}
		if seen[k] {
			continue
		}
		seen[k] = true
		ch <- prometheus.MustNewConstMetric(certDesc, prometheus.GaugeValue, float64(cert.NotAfter.Unix()), k[0], k[1], k[2])
	}
}

func ipStrings(c *x509.Certificate) []string {
	out := make([]string, 0, len(c.IPAddresses))
	for _, ip := range c.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}
