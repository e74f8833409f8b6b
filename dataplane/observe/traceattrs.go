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

// serverAttributes appends to attrs Traefik's CaptureServerRequest
// attributes (plus entry_point and the global attributes), with room for
// the response's. It records the request's query and its redaction in tr.
func (t *Tracing) serverAttributes(tr *Trace, attrs []attribute.KeyValue, r *http.Request, entryPoint string) []attribute.KeyValue {
	attrs = slices.Grow(attrs[:0], 16+len(t.globalAttrs)+len(t.reqHeaders)+1+len(t.respHeaders))
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
		semconv.URLScheme(canonicalValue(r.Header, "X-Forwarded-Proto")),
		semconv.UserAgentOriginal(canonicalValue(r.Header, "User-Agent")),
		semconv.ServerAddress(r.Host),
	)
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
	attrs = append(attrs, semconv.NetworkPeerAddress(host), semconv.ClientAddress(client))
	if err == nil {
		p, _ := strconv.Atoi(port)
		attrs = append(attrs, semconv.ClientPort(p), semconv.NetworkPeerPort(p))
	}
	return appendHeaders(attrs, "http.request.header.", r.Header, t.reqHeaders)
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
	attrs = slices.Grow(attrs[:0], 12+len(t.reqHeaders)+1+len(t.respHeaders))
	attrs = append(attrs,
		semconv.HTTPRequestMethodKey.String(r.Method),
		semconv.NetworkProtocolVersion(protoVersion(r.Proto)),
		semconv.UserAgentOriginal(canonicalValue(r.Header, "User-Agent")),
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
	var full string // one concatenation (one allocation) either way
	if path := r.URL.EscapedPath(); query == "" {
		full = u.prefix + path
	} else {
		full = u.prefix + path + "?" + query
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
