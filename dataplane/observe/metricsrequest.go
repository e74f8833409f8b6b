package observe

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// reqKey is one combination of request labels.
type reqKey struct {
	code                               int
	method, proto, ep, router, service string
	hdr                                string // headerLabels values, NUL-separated
	// noSvc: the key makes no service series (its service answered
	// another status, counted under its own key: Request).
	noSvc bool
}

// series are the children of one level for one reqKey.
type series struct {
	reqs, reqBytes, respBytes prometheus.Counter
	dur                       prometheus.Observer
}

// series binds the level's vectors to labels; requests_total also gets
// the headerLabels values hdr.
func (f *family) series(hdr []string, labels ...string) *series {
	if f == nil {
		return nil
	}
	withHeaders := append(labels[:len(labels):len(labels)], hdr...)
	return &series{f.reqs.WithLabelValues(withHeaders...), f.reqBytes.WithLabelValues(labels...), f.respBytes.WithLabelValues(labels...), f.dur.WithLabelValues(labels...)}
}

func (s *series) observe(secs, in, out float64) {
	if s == nil {
		return
	}
	s.reqs.Inc()
	s.dur.Observe(secs)
	s.reqBytes.Add(in)
	s.respBytes.Add(out)
}

// children are the metric children of one reqKey, resolved once: after the
// first request with given labels, Request does one sync.Map lookup and
// atomic updates, without hashing labels or locking the vectors.
type children struct {
	ep, rt, svc *series
	retries     prometheus.Counter
	retried     *series // the service's code="502" series: refused attempts
}

func (m *Metrics) children(k reqKey) *children {
	if v, ok := m.cache.Load(k); ok {
		return v.(*children)
	}
	code := strconv.Itoa(k.code)
	var hdr []string
	if len(m.hdrLabels) > 0 {
		hdr = strings.Split(k.hdr, "\x00")
	}
	c := &children{}
	if m.ep && k.ep != "" {
		c.ep = m.epM.series(hdr, code, k.method, k.proto, k.ep)
	}
	if m.router && k.router != "" {
		c.rt = m.rtM.series(hdr, code, k.method, k.proto, k.router, k.service)
	}
	if m.service && k.service != "" && !k.noSvc {
		c.svc = m.svcM.series(hdr, code, k.method, k.proto, k.service)
		c.retries = m.retries.WithLabelValues(k.service)
		c.retried = m.svcM.series(hdr, strconv.Itoa(http.StatusBadGateway), k.method, k.proto, k.service)
	}
	v, _ := m.cache.LoadOrStore(k, c)
	return v.(*children)
}

// tlsChildren returns the TLS counters of k (tlsSeriesOf): children of
// the levels' tls_total vectors.
func (m *Metrics) tlsChildren(k tlsKey) *tlsSeries[prometheus.Counter] {
	return tlsSeriesOf[prometheus.Counter](m, &m.tlsCache, k)
}

// levels implements tlsBackend.
func (m *Metrics) levels() (ep, router, service bool) { return m.ep, m.router, m.service }

// tlsSeries implements tlsBackend: the child of level l's tls_total
// vector with label values (tlsLabels[l] order).
func (m *Metrics) tlsSeries(l level, values ...string) prometheus.Counter {
	return [...]*family{m.epM, m.rtM, m.svcM}[l].tls.WithLabelValues(values...)
}

// Request implements Observer.
func (m *Metrics) Request(ev *RequestEvent) { m.request(ev, nil) }

// request records ev; the children of its labels come from rt's cache when
// rt is set (the route that served it: ForRoute), else from m's.
func (m *Metrics) request(ev *RequestEvent, rt *routeMetrics) {
	if ev.NoMetrics || (!m.internals && ev.Internal()) {
		return
	}
	proto := protocolLabel(ev.Header)
	code := ev.Status
	if proto == protoGRPC || proto == protoGRPCWeb {
		code = grpcCode(ev.ResponseHeader)
	}
	k := reqKey{code: code, method: methodLabel(ev.Method), proto: proto, ep: ev.EntryPoint, router: ev.Router, service: ev.Service}
	switch len(m.hdrLabels) {
	case 0:
	case 1:
		k.hdr = m.hdrLabels[0].value(ev)
	default:
		vals := make([]string, len(m.hdrLabels))
		for i := range m.hdrLabels {
			vals[i] = m.hdrLabels[i].value(ev)
		}
		k.hdr = strings.Join(vals, "\x00")
	}
	origin := ev.OriginStatus != 0 && code == ev.Status && m.service && ev.Service != ""
	k.noSvc = origin
	var c *children
	if rt != nil {
		c = rt.children(k)
	} else {
		c = m.children(k)
	}
	secs := ev.Duration.Seconds()
	in, out := float64(contentLength(ev.Header)), float64(ev.BytesOut)
	c.ep.observe(secs, in, out)
	c.rt.observe(secs, in, out)
	svc := c
	if origin {
		// A middleware replaced the service's answer: the service's
		// series get what it answered (a service-only key).
		svc = m.children(reqKey{code: ev.OriginStatus, method: k.method, proto: proto, service: ev.Service, hdr: k.hdr})
	}
	for _, call := range ev.Calls {
		if m.service {
			cc := m.children(reqKey{code: call.Status, method: methodLabel(http.MethodGet), proto: proto, service: call.Service, hdr: k.hdr})
			cc.svc.observe(call.Duration.Seconds(), 0, float64(call.Bytes))
		}
	}
	if c := svc; c.svc != nil {
		c.svc.observe(secs, in, out)
		if ev.Retries > 0 {
			c.retries.Add(float64(ev.Retries))
			// Each retried attempt was refused before anything was sent:
			// counted as Traefik's proxy answers it (502), taking no time.
			for range ev.Retries {
				c.retried.observe(0, 0, 0)
			}
		}
	}
	if ev.TLSVersion != 0 {
		tk := tlsKey{version: ev.TLSVersion, cipher: ev.TLSCipher, ep: ev.EntryPoint, router: ev.Router, service: ev.Service}
		var t *tlsSeries[prometheus.Counter]
		if rt != nil {
			t = rt.tlsChildren(tk)
		} else {
			t = m.tlsChildren(tk)
		}
		for _, ctr := range [...]prometheus.Counter{t.ep, t.rt, t.svc} {
			if ctr != nil {
				ctr.Inc()
			}
		}
	}
}
