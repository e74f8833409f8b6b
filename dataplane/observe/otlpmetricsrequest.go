package observe

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

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

// tlsChildren returns the TLS series of k (tlsSeriesOf): the levels'
// tls counters bound to its attributes.
func (m *OTLPMetrics) tlsChildren(k tlsKey) *tlsSeries[*otelSeries] {
	return tlsSeriesOf[*otelSeries](m, &m.tlsCache, k)
}

// levels implements tlsBackend.
func (m *OTLPMetrics) levels() (ep, router, service bool) { return m.ep, m.router, m.service }

// tlsSeries implements tlsBackend: level l's instruments bound to the
// attributes tlsLabels[l] with values (the same length).
func (m *OTLPMetrics) tlsSeries(l level, values ...string) *otelSeries {
	kv := make([]string, 0, 2*len(values))
	for i, v := range values {
		kv = append(kv, tlsLabels[l][i], v)
	}
	return [...]*otelFamily{m.epF, m.rtF, m.svcF}[l].series(kv...)
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

// responseAttrs appends the attributes the server and client durations
// start with: error.type for a status ≥ 400, the status, and
// network.protocol.name/version of proto ("HTTP/1.1").
func responseAttrs(attrs []attribute.KeyValue, status int, proto string) []attribute.KeyValue {
	if et, ok := errorType(status); ok {
		attrs = append(attrs, et)
	}
	return append(attrs,
		semconv.HTTPResponseStatusCode(status),
		semconv.NetworkProtocolName(strings.ToLower(proto)),
		semconv.NetworkProtocolVersion(protoVersion(proto)))
}

// serverDurationAttrs are Traefik's http.server.request.duration
// attributes (pkg/middlewares/observability/semconv.go): error.type for a
// status ≥ 400, the status, network.protocol.name/version, http.route for
// a routed request, server.address and server.port (the Host's, else the
// scheme's default), http.request.method and url.scheme (X-Forwarded-Proto).
func serverDurationAttrs(ev *RequestEvent) []attribute.KeyValue {
	attrs := responseAttrs(make([]attribute.KeyValue, 0, 9), ev.Status, ev.Proto)
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
	attrs := responseAttrs(make([]attribute.KeyValue, 0, 8), a.Status, ev.Proto)
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
