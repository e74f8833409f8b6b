package observe

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
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
// (entrypoint and service labels on, router labels off, internals left out).
type MetricsOptions struct {
	// Prometheus is the static metrics.prometheus section; nil means defaults.
	Prometheus *static.Prometheus
	// AddInternals counts requests served by Gantry's own services
	// (metrics.addInternals; Traefik's default false leaves a scrape of
	// prometheus@internal out of the request metrics).
	AddInternals bool
	// Servers, when set, is called at each scrape to fill
	// traefik_service_server_up. It must be safe for concurrent use.
	Servers func() []ServerUp
	// Certificates, when set, is called at each scrape to fill
	// traefik_tls_certs_not_after. It must be safe for concurrent use.
	Certificates func() []*x509.Certificate
	// Runtime adds the Go runtime and process collectors (go_*, process_*).
	Runtime bool
}

// Metrics exports Traefik v3's Prometheus metrics, with its names, label
// names and label order, help texts and default buckets
// (https://doc.traefik.io/traefik/observability/metrics/overview/; traefik
// pkg/observability/metrics/prometheus.go):
//
//	traefik_entrypoint_requests_total{code,method,protocol,entrypoint}
//	traefik_entrypoint_requests_tls_total{tls_version,tls_cipher,entrypoint}
//	traefik_entrypoint_request_duration_seconds{code,method,protocol,entrypoint}
//	traefik_entrypoint_requests_bytes_total{code,method,protocol,entrypoint}
//	traefik_entrypoint_responses_bytes_total{code,method,protocol,entrypoint}
//	traefik_router_*{…,router,service}   (same five; only with addRoutersLabels)
//	traefik_service_*{…,service}         (same five; addServicesLabels, default on)
//	traefik_service_retries_total{service}
//	traefik_service_server_up{service,url}            (1 up, 0 down)
//	traefik_open_connections{entrypoint,protocol}     (protocol "TCP")
//	traefik_config_reloads_total
//	traefik_config_last_reload_success                (unix seconds)
//	traefik_tls_certs_not_after{cn,serial,sans}       (unix seconds)
//
// Durations are in seconds, sizes in bytes; requests_bytes_total counts the
// request's Content-Length (a chunked upload counts 0). Label values are
// bounded: method is the verb for HTTP/1.1's methods, PATCH and PRI,
// EXTENSION_METHOD otherwise (NON_UTF8_HTTP_METHOD when not UTF-8);
// protocol is http, websocket, sse, grpc or grpc-web; for gRPC, code is the
// Grpc-Status (2, Unknown, when the answer has none), as in Traefik.
//
// metrics.prometheus.headerLabels (label -> request header) adds its
// labels, after Traefik's, to the three requests_total counters; the value
// is the header's first value ("" when absent; for Host, the request's
// host), at most MaxHeaderLabelValues distinct values per label (then
// "other"), since clients choose them.
//
// Service metrics count attempts, as Traefik records them around each
// server: a request the load balancer retried after a refused connection
// counts one code="502" attempt per retry plus the final answer. Unlike
// Traefik, a 503 "no available server" (no server reached) is still counted
// on the service, so an outage is visible there (Traefik issue 12451).
//
// Metrics is an Observer; its methods are safe for concurrent use and never
// block on I/O. After a request's label values have been seen once,
// Request does not allocate (with two or more headerLabels it builds one
// key string per request).
type Metrics struct {
	reg *prometheus.Registry

	ep, router, service, internals bool

	epM, rtM, svcM *family
	retries        *prometheus.CounterVec
	openConns      *prometheus.GaugeVec
	reloads        prometheus.Counter
	lastReload     prometheus.Gauge

	cache    sync.Map // reqKey -> *children
	tlsCache sync.Map // tlsKey -> *tlsSeries[prometheus.Counter]
	conns    sync.Map // [2]string{entrypoint, protocol} -> prometheus.Gauge

	// headerLabels (metrics.prometheus.headerLabels), sorted by label name:
	// each adds a label to the requests_total counters.
	hdrLabels []headerLabel
}

// headerLabel is one metrics.prometheus.headerLabels entry: the label, the
// request header it takes its value from, and the values seen so far
// (bounded by MaxHeaderLabelValues).
type headerLabel struct {
	label, header string
	seen          *sync.Map // value -> struct{}
	n             *atomic.Int64
}

// MaxHeaderLabelValues bounds the distinct values one headerLabels label
// takes (a client chooses them): later new values are counted as "other".
const MaxHeaderLabelValues = 100

// value is the label value for the request: the header's first value ("" when absent; Host is the request's
// host), or "other" once MaxHeaderLabelValues distinct values were seen.
func (l *headerLabel) value(ev *RequestEvent) string {
	var v string
	if l.header == "Host" {
		v = ev.Host
	} else {
		v = headerValue(ev.Header, l.header)
	}
	if _, ok := l.seen.Load(v); ok {
		return v
	}
	if l.n.Load() >= MaxHeaderLabelValues {
		return "other"
	}
	if _, loaded := l.seen.LoadOrStore(v, struct{}{}); !loaded {
		l.n.Add(1)
	}
	return v
}

// CheckPrometheus validates metrics.prometheus: each headerLabels label is a
// Prometheus label name distinct from Traefik's own labels and names a
// header. Errors name the option.
func CheckPrometheus(p *static.Prometheus) error {
	if p == nil {
		return nil
	}
	reserved := map[string]bool{"code": true, "method": true, "protocol": true, "entrypoint": true, "router": true, "service": true}
	for _, label := range sortedKeys(p.HeaderLabels) {
		if !labelName.MatchString(label) || strings.HasPrefix(label, "__") || reserved[label] {
			return fmt.Errorf("metrics.prometheus.headerLabels.%s: not a usable label name (letters, digits and _, not code, method, protocol, entrypoint, router or service)", label)
		}
		if strings.TrimSpace(p.HeaderLabels[label]) == "" {
			return fmt.Errorf("metrics.prometheus.headerLabels.%s: names no header", label)
		}
	}
	return nil
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// family is the five request metrics of one level (entrypoint, router or
// service).
type family struct {
	reqs, tls, reqBytes, respBytes *prometheus.CounterVec
	dur                            *prometheus.HistogramVec
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
		reg:       prometheus.NewRegistry(),
		ep:        p.AddEntryPointsLabels == nil || *p.AddEntryPointsLabels,
		router:    p.AddRoutersLabels,
		service:   p.AddServicesLabels == nil || *p.AddServicesLabels,
		internals: opts.AddInternals,
	}
	for _, label := range sortedKeys(p.HeaderLabels) {
		m.hdrLabels = append(m.hdrLabels, headerLabel{label: label, header: canonical(strings.TrimSpace(p.HeaderLabels[label])),
			seen: new(sync.Map), n: new(atomic.Int64)})
	}
	newFamily := func(level, what string, labels ...string) *family {
		base := []string{"code", "method", "protocol"}
		all := append(base[:3:3], labels...)
		tlsL := append([]string{"tls_version", "tls_cipher"}, labels...)
		c := func(name, help string, l []string) *prometheus.CounterVec {
			v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "traefik_" + level + "_" + name, Help: help}, l)
			m.reg.MustRegister(v)
			return v
		}
		withHeaders := append([]string(nil), all...)
		for _, h := range m.hdrLabels {
			withHeaders = append(withHeaders, h.label)
		}
		f := &family{
			reqs:      c("requests_total", fmt.Sprintf(helpReqs[level], what), withHeaders),
			tls:       c("requests_tls_total", helpTLS[level], tlsL),
			reqBytes:  c("requests_bytes_total", fmt.Sprintf(helpReqBytes[level], what), all),
			respBytes: c("responses_bytes_total", fmt.Sprintf(helpRespBytes[level], what), all),
			dur: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Name: "traefik_" + level + "_request_duration_seconds", Help: fmt.Sprintf(helpDur[level], what), Buckets: buckets,
			}, all),
		}
		m.reg.MustRegister(f.dur)
		return f
	}
	if m.ep {
		m.epM = newFamily("entrypoint", "status code, protocol, and method", "entrypoint")
	}
	if m.router {
		m.rtM = newFamily("router", "service, status code, protocol, and method", "router", "service")
	}
	if m.service {
		m.svcM = newFamily("service", "status code, protocol, and method", "service")
		m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "traefik_service_retries_total", Help: "How many request retries happened on a service."}, []string{"service"})
		m.reg.MustRegister(m.retries)
		if opts.Servers != nil {
			m.reg.MustRegister(&serverUpCollector{list: opts.Servers})
		}
	}
	m.openConns = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "traefik_open_connections", Help: "How many open connections exist, by entryPoint and protocol"}, []string{"entrypoint", "protocol"})
	m.reloads = prometheus.NewCounter(prometheus.CounterOpts{Name: "traefik_config_reloads_total", Help: "Config reloads"})
	m.lastReload = prometheus.NewGauge(prometheus.GaugeOpts{Name: "traefik_config_last_reload_success", Help: "Last config reload success"})
	m.reg.MustRegister(m.openConns, m.reloads, m.lastReload)
	if opts.Certificates != nil {
		m.reg.MustRegister(&certCollector{list: opts.Certificates})
	}
	if opts.Runtime {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return m
}

// Help texts, as Traefik writes them (%s: the partitioning).
var (
	helpReqs = map[string]string{
		"entrypoint": "How many HTTP requests processed on an entrypoint, partitioned by %s.",
		"router":     "How many HTTP requests are processed on a router, partitioned by %s.",
		"service":    "How many HTTP requests processed on a service, partitioned by %s.",
	}
	helpTLS = map[string]string{
		"entrypoint": "How many HTTP requests with TLS processed on an entrypoint, partitioned by TLS Version and TLS cipher Used.",
		"router":     "How many HTTP requests with TLS are processed on a router, partitioned by service, TLS Version, and TLS cipher Used.",
		"service":    "How many HTTP requests with TLS processed on a service, partitioned by TLS version and TLS cipher.",
	}
	helpDur = map[string]string{
		"entrypoint": "How long it took to process the request on an entrypoint, partitioned by %s.",
		"router":     "How long it took to process the request on a router, partitioned by %s.",
		"service":    "How long it took to process the request on a service, partitioned by %s.",
	}
	helpReqBytes = map[string]string{
		"entrypoint": "The total size of requests in bytes handled by an entrypoint, partitioned by %s.",
		"router":     "The total size of requests in bytes handled by a router, partitioned by %s.",
		"service":    "The total size of requests in bytes received by a service, partitioned by %s.",
	}
	helpRespBytes = map[string]string{
		"entrypoint": "The total size of responses in bytes handled by an entrypoint, partitioned by %s.",
		"router":     "The total size of responses in bytes handled by a router, partitioned by %s.",
		"service":    "The total size of responses in bytes returned by a service, partitioned by %s.",
	}
)

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

// Keep drops the series of routers and services for which router,
// respectively service, returns false (they left the configuration), so a
// churning configuration neither grows memory nor keeps exporting series
// of objects that are gone (Traefik drops them too, after a scrape).
// Internal routers and services are always kept. Safe to call while
// requests are recorded; an increment racing the removal may be lost.
func (m *Metrics) Keep(router, service func(name string) bool) {
	gone := func(name string, exists func(string) bool) bool {
		return name != "" && !strings.HasSuffix(name, "@internal") && !exists(name)
	}
	dropRouters, dropServices := map[string]bool{}, map[string]bool{}
	m.cache.Range(func(k, _ any) bool {
		key := k.(reqKey)
		if gone(key.router, router) || gone(key.service, service) {
			m.cache.Delete(k)
			if gone(key.router, router) {
				dropRouters[key.router] = true
			}
			if gone(key.service, service) {
				dropServices[key.service] = true
			}
		}
		return true
	})
	m.tlsCache.Range(func(k, _ any) bool {
		key := k.(tlsKey)
		if gone(key.router, router) || gone(key.service, service) {
			m.tlsCache.Delete(k)
		}
		return true
	})
	for _, f := range []*family{m.rtM, m.svcM} {
		if f == nil {
			continue
		}
		for _, v := range []interface {
			DeletePartialMatch(prometheus.Labels) int
		}{f.reqs, f.tls, f.reqBytes, f.respBytes, f.dur} {
			for r := range dropRouters {
				if f == m.rtM {
					v.DeletePartialMatch(prometheus.Labels{"router": r})
				}
			}
			for s := range dropServices {
				v.DeletePartialMatch(prometheus.Labels{"service": s})
			}
		}
	}
	if m.retries != nil {
		for s := range dropServices {
			m.retries.DeletePartialMatch(prometheus.Labels{"service": s})
		}
	}
}

// Conn implements Observer: it moves traefik_open_connections. HTTP and
// HTTPS connections are counted as protocol "TCP" (Traefik counts the
// connections of its TCP entrypoints, which carry HTTP); others as given,
// upper-cased ("UDP").
func (m *Metrics) Conn(entryPoint, protocol string, delta int) {
	k := [2]string{entryPoint, protocol}
	v, ok := m.conns.Load(k)
	if !ok {
		v, _ = m.conns.LoadOrStore(k, m.openConns.WithLabelValues(entryPoint, connProtocolLabel(protocol)))
	}
	v.(prometheus.Gauge).Add(float64(delta))
}
