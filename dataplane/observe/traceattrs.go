package observe

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

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

// serverAttributes sets s's attributes to Traefik's CaptureServerRequest
// attributes (plus entry_point and the global attributes), with room for
// the response's. It records the request's query and its redaction in tr.
func (t *Tracing) serverAttributes(tr *Trace, s *span, r *http.Request, entryPoint string) {
	s.grow(16 + len(t.globalAttrs) + len(t.reqHeaders) + 1 + len(t.respHeaders))
	s.addString("entry_point", entryPoint)
	for _, kv := range t.globalAttrs {
		s.add(kv)
	}
	tr.rawQuery = r.URL.RawQuery
	if tr.rawQuery != "" {
		tr.safeQuery = t.safeRawQuery(tr.rawQuery)
	}
	s.addString(semconv.HTTPRequestMethodKey, r.Method)
	s.addString(semconv.NetworkProtocolVersionKey, protoVersion(r.Proto))
	s.addInt(semconv.HTTPRequestBodySizeKey, int(r.ContentLength))
	s.addString(semconv.URLPathKey, r.URL.Path)
	s.addString(semconv.URLQueryKey, tr.safeQuery)
	s.addString(semconv.URLSchemeKey, canonicalValue(r.Header, "X-Forwarded-Proto"))
	s.addString(semconv.UserAgentOriginalKey, canonicalValue(r.Header, "User-Agent"))
	s.addString(semconv.ServerAddressKey, r.Host)
	host, port, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	client := host
	if xff := canonicalValue(r.Header, "X-Forwarded-For"); xff != "" {
		if ip, _, _ := strings.Cut(xff, ","); strings.TrimSpace(ip) != "" {
			client = strings.TrimSpace(ip)
		}
	}
	s.addString(semconv.NetworkPeerAddressKey, host)
	s.addString(semconv.ClientAddressKey, client)
	if err == nil {
		p, _ := strconv.Atoi(port)
		s.addInt(semconv.ClientPortKey, p)
		s.addInt(semconv.NetworkPeerPortKey, p)
	}
	addHeaders(s, "http.request.header.", r.Header, t.reqHeaders)
}

// canonicalValue is h.Get(key) for a key in canonical form, without
// canonicalizing it again (http.Header keys are canonical: Get would look
// up the same key).
func canonicalValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
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
	t.upstreamsMu.RLock()
	u, ok := t.upstreams[raw]
	t.upstreamsMu.RUnlock()
	if ok {
		return u, true
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
	u = &upstream{prefix: base.String(), scheme: su.Scheme, host: host, port: p}
	t.upstreamsMu.Lock()
	if t.upstreams == nil {
		t.upstreams = make(map[string]*upstream)
	}
	if len(t.upstreams) < maxUpstreams {
		t.upstreams[raw] = u
	}
	t.upstreamsMu.Unlock()
	return u, true
}

// clientAttributes sets s's attributes to Traefik's CaptureClientRequest
// attributes for one call of r to the server upstream, with room for the
// response's.
func (t *Tracing) clientAttributes(tr *Trace, s *span, r *http.Request, upstream string) {
	s.grow(12 + len(t.reqHeaders) + 1 + len(t.respHeaders))
	s.addString(semconv.HTTPRequestMethodKey, r.Method)
	s.addString(semconv.NetworkProtocolVersionKey, protoVersion(r.Proto))
	s.addString(semconv.UserAgentOriginalKey, canonicalValue(r.Header, "User-Agent"))
	u, ok := t.upstream(upstream)
	if !ok {
		return
	}
	query := r.URL.RawQuery
	switch {
	case query == "":
	case query == tr.rawQuery && tr.rawQuery != "":
		query = tr.safeQuery
	default:
		query = t.safeRawQuery(query)
	}
	var full string // one concatenation (one allocation) either way
	if path := r.URL.EscapedPath(); query == "" {
		full = u.prefix + path
	} else {
		full = u.prefix + path + "?" + query
	}
	s.addString(semconv.URLFullKey, full)
	s.addString(semconv.URLSchemeKey, u.scheme)
	s.addString(semconv.NetworkPeerAddressKey, u.host)
	s.addInt(semconv.NetworkPeerPortKey, u.port)
	s.addString(semconv.ServerAddressKey, u.host)
	s.addInt(semconv.ServerPortKey, u.port)
	addHeaders(s, "http.request.header.", r.Header, t.reqHeaders)
}

// addHeaders sets, for each of names (canonical) present in h, the
// attribute prefix + the lower-case name to its values (User-Agent is
// user_agent.original already).
func addHeaders(s *span, prefix string, h http.Header, names []string) {
	for _, name := range names {
		if strings.EqualFold(name, "User-Agent") {
			continue // already user_agent.original
		}
		if v := h[name]; v != nil {
			s.add(attribute.StringSlice(prefix+strings.ToLower(name), v))
		}
	}
}

// statusAttrs is Traefik's CaptureResponse: it sets s's
// http.response.status_code (when known) and the captured response
// headers, and returns the span status: an error for 5xx on every span,
// for 4xx too on the client span.
func statusAttrs(s *span, code int, kind trace.SpanKind, h http.Header, captured []string) (codes.Code, string) {
	status, desc := codes.Unset, ""
	switch {
	case code == 0:
	case code < 100 || code >= 600:
		status, desc = codes.Error, fmt.Sprintf("Invalid HTTP status code %d", code)
	case code >= 500, kind == trace.SpanKindClient && code >= 400:
		status = codes.Error
	}
	if code > 0 {
		s.addInt(semconv.HTTPResponseStatusCodeKey, code)
	}
	addHeaders(s, "http.response.header.", h, captured)
	return status, desc
}

// safeRawQuery redacts every query value not listed in
// tracing.safeQueryParams, as Traefik does (the result is re-encoded with
// sorted keys, as url.Values encodes it). A short query of plain
// characters is redacted without url.Values (simpleSafeQuery); any other
// goes through url.ParseQuery.
func (t *Tracing) safeRawQuery(raw string) string {
	if s, ok := t.simpleSafeQuery(raw); ok {
		return s
	}
	q, _ := url.ParseQuery(raw)
	for k := range q {
		if !slices.Contains(t.safeQuery, k) {
			q.Set(k, Redacted)
		}
	}
	return q.Encode()
}

// maxSimpleQueryPairs bounds the '&'-separated parts of a query
// simpleSafeQuery redacts.
const maxSimpleQueryPairs = 8

// simpleSafeQuery is safeRawQuery's result for a query of at most
// maxSimpleQueryPairs parts written in unreserved characters, '=' and '&'
// only, in one allocation: there url.ParseQuery unescapes nothing and
// fails on nothing, and url.QueryEscape changes no key and no value but
// one holding '=' (then ok is false, as for any other query). As
// url.Values.Encode, keys are sorted, a key's values keep their order; a
// redacted key has one value. ok is false too when GODEBUG's
// urlmaxqueryparams may refuse a short query (t.queryLimitSet).
func (t *Tracing) simpleSafeQuery(raw string) (string, bool) {
	if t.queryLimitSet {
		return "", false
	}
	parts := 1
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '&':
			parts++
		case c != '=' && !unreservedByte(c):
			return "", false
		}
	}
	if parts > maxSimpleQueryPairs {
		return "", false
	}
	type pair struct{ k, v string }
	var pairs [maxSimpleQueryPairs]pair
	n := 0
	for rest := raw; rest != ""; {
		var p string
		p, rest, _ = strings.Cut(rest, "&")
		if p == "" {
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		pairs[n] = pair{k, v}
		n++
	}
	for i := 1; i < n; i++ { // insertion sort: stable, a key's values keep their order
		for j := i; j > 0 && pairs[j].k < pairs[j-1].k; j-- {
			pairs[j], pairs[j-1] = pairs[j-1], pairs[j]
		}
	}
	var buf [128]byte
	b := buf[:0]
	for i := 0; i < n; i++ {
		p := pairs[i]
		safe := slices.Contains(t.safeQuery, p.k)
		if !safe && i > 0 && pairs[i-1].k == p.k {
			continue // one REDACTED for the key
		}
		v := p.v
		if !safe {
			v = Redacted
		} else if strings.IndexByte(v, '=') >= 0 {
			return "", false // url.QueryEscape writes it %3D
		}
		if len(b) > 0 {
			b = append(b, '&')
		}
		b = append(b, p.k...)
		b = append(b, '=')
		b = append(b, v...)
	}
	return string(b), true
}

// unreservedByte: c is an unreserved URI character (RFC 3986 §2.3), which
// url.QueryEscape leaves as it is.
func unreservedByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}
